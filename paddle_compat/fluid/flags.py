"""fluid.set_flags / get_flags: Paddle's FLAGS_* settings, kept per process (environment gives defaults)."""

import os

__all__ = ["set_flags", "get_flags"]

_flags = {}


def _check(name):
    if not isinstance(name, str) or not name.startswith("FLAGS_"):
        raise ValueError("flag names start with 'FLAGS_', got %r" % (name,))


def set_flags(flags):
    """Set flags from a dict {"FLAGS_name": value}. The value is also exported to os.environ, which is
    where this package's runtime reads the flags it honours (FLAGS_rpc_deadline, ...)."""
    if not isinstance(flags, dict):
        raise TypeError("set_flags takes a dict of {'FLAGS_name': value}, got %s" % type(flags).__name__)
    for name, value in flags.items():
        _check(name)
        _flags[name] = value
        os.environ[name] = str(int(value) if isinstance(value, bool) else value)


def get_flags(flags):
    """{name: value} for a flag name or a list/tuple of them; unset flags raise ValueError naming the flag."""
    names = [flags] if isinstance(flags, str) else flags
    if not isinstance(names, (list, tuple)):
        raise TypeError("get_flags takes a flag name or a list of them, got %s" % type(flags).__name__)
    out = {}
    for name in names:
        _check(name)
        if name in _flags:
            out[name] = _flags[name]
        elif name in os.environ:
            out[name] = os.environ[name]
        else:
            raise ValueError("flag %s is not set (set it with fluid.set_flags or the environment)" % name)
    return out
