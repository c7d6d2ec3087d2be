"""`paddle.compat`: Paddle 1.8's small py2/py3 helpers, which its tests and scripts import as `cpt`."""

import math

__all__ = ["long_type", "int_type", "to_text", "to_bytes", "round", "floor_division", "get_exception_message"]

int_type = int
long_type = int


def _convert(obj, conv, inplace, conv_dicts=False):
    if obj is None:
        return obj
    if isinstance(obj, list):
        if inplace:
            obj[:] = [conv(x) for x in obj]
            return obj
        return [conv(x) for x in obj]
    if isinstance(obj, set):
        new = {conv(x) for x in obj}
        if inplace:
            obj.clear()
            obj.update(new)
            return obj
        return new
    if isinstance(obj, dict) and conv_dicts:
        new = {conv(k): conv(v) for k, v in obj.items()}
        if inplace:
            # as Paddle 1.8: the converted items are added with update(), so a key that changed type
            # (b"k" -> "k") is there twice afterwards
            obj.update(new)
            return obj
        return new
    return conv(obj)


def _text(x, encoding="utf-8"):
    return x.decode(encoding) if isinstance(x, bytes) else x


class _NotEncodable(TypeError, AttributeError):
    """Paddle 1.8 raises AttributeError here (it calls .encode on the object); TypeError says what is wrong."""


def _bytes(x, encoding="utf-8"):
    if isinstance(x, str):
        return x.encode(encoding)
    if isinstance(x, bytes) or x is None:
        return x
    raise _NotEncodable("to_bytes: cannot encode a %s (%r); give str or bytes" % (type(x).__name__, x))


def to_text(obj, encoding="utf-8", inplace=False):
    """bytes (or a list/set of them, or a dict's keys and values) -> str; other objects pass through."""
    return _convert(obj, lambda x: _text(x, encoding), inplace, conv_dicts=True)


def to_bytes(obj, encoding="utf-8", inplace=False):
    """str (or a list/set of them) -> bytes; anything else but bytes is refused, as in Paddle 1.8."""
    return _convert(obj, lambda x: _bytes(x, encoding), inplace)


def round(x, d=0):
    """Python 2's round: halves go away from zero (Python 3's builtin rounds them to even)."""
    p = 10 ** d
    if x > 0.0:
        return float(math.floor((x * p) + math.copysign(0.5, x))) / p
    if x < 0.0:
        return float(math.ceil((x * p) + math.copysign(0.5, x))) / p
    return math.copysign(0.0, x)


def floor_division(x, y):
    return x // y


def get_exception_message(exc):
    assert exc is not None
    return str(exc)
