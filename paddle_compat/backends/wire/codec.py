"""The wire codec: a closed set of plain types, tagged binary meta parsed with struct, tensors' bytes apart.

    encode(obj) -> (meta: bytes, buffers: [memoryview])        decode(meta, buffers) -> obj

Types: None, bool, int (64-bit signed), float (64-bit), str, bytes, list, tuple, dict, torch.Tensor (CPU,
strided), numpy.ndarray (no object or structured dtypes), and WireError (an error's kind, from a fixed
table, and its message). A tensor or array is its dtype (a code in a fixed table), its shape and one buffer
of raw bytes; bytes longer than INLINE_BYTES travel as a buffer too. Buffers are referenced in order, each
exactly once.

The decoder builds nothing but those types: it never imports, calls, getattrs or evals anything a message
names (there are no names in the format, only tags and numbers). Every length and count is checked against
what arrived before anything is allocated; nesting deeper than MAX_DEPTH, more than MAX_ITEMS values, an
unknown tag, a bad length, an unreferenced buffer or trailing bytes raise DecodeError naming the problem.
"""

import struct
import sys

import numpy as np

from ...ir.lazy import torch

__all__ = ["encode", "decode", "DecodeError", "EncodeError", "WireError", "ERROR_KINDS", "MAX_DEPTH",
           "MAX_ITEMS", "INLINE_BYTES"]

MAX_DEPTH = 32
MAX_ITEMS = 1 << 20
MAX_DIMS = 32
INLINE_BYTES = 1024

# an error travels as its kind's index here (unknown kinds are sent as RuntimeError, named in the message)
ERROR_KINDS = ("RuntimeError", "ValueError", "TypeError", "KeyError", "IndexError", "OSError", "TimeoutError",
               "NotImplementedError", "AssertionError", "PsError", "PeerLostError", "PsDeadlineError",
               "RendezvousError", "DecodeError")


class DecodeError(ValueError):
    """Bytes that are not a well-formed message of this codec."""


class EncodeError(TypeError):
    """A value outside the codec's closed set of types."""


class WireError:
    """An error answered over the wire: kind (one of ERROR_KINDS) and message."""

    __slots__ = ("kind", "message")

    def __init__(self, kind, message):
        if kind not in ERROR_KINDS:
            message, kind = "%s: %s" % (kind, message), "RuntimeError"
        self.kind, self.message = kind, str(message)

    def __eq__(self, other):
        return isinstance(other, WireError) and (self.kind, self.message) == (other.kind, other.message)

    def __repr__(self):
        return "WireError(%s: %s)" % (self.kind, self.message)


_U8 = struct.Struct("<B")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")

# tags
_NONE, _TRUE, _FALSE, _INT, _FLOAT, _STR, _BYTES, _BYTES_BUF = b"N", b"T", b"F", b"i", b"d", b"s", b"b", b"B"
_LIST, _TUPLE, _DICT, _TENSOR, _ARRAY, _ERROR = b"l", b"t", b"m", b"X", b"A", b"E"

# dtype tables: (torch name, numpy name, item size); the index is the code on the wire
_DTYPES = (("float32", "float32", 4), ("float64", "float64", 8), ("float16", "float16", 2),
           ("bfloat16", None, 2), ("int8", "int8", 1), ("uint8", "uint8", 1), ("int16", "int16", 2),
           ("int32", "int32", 4), ("int64", "int64", 8), ("bool", "bool", 1), ("complex64", "complex64", 8),
           ("complex128", "complex128", 16), ("uint16", "uint16", 2), ("uint32", "uint32", 4),
           ("uint64", "uint64", 8))
_tables = {}


def _torch_tables():
    t = _tables.get("torch")
    if t is None:
        to_code, from_code = {}, []
        for i, (name, _, size) in enumerate(_DTYPES):
            dt = getattr(torch, name, None)
            from_code.append((dt, size))
            if dt is not None:
                to_code[dt] = i
        t = _tables["torch"] = (to_code, from_code)
    return t


def _numpy_tables():
    t = _tables.get("numpy")
    if t is None:
        to_code, from_code = {}, []
        for i, (_, name, size) in enumerate(_DTYPES):
            dt = np.dtype(name) if name else None
            from_code.append((dt, size))
            if dt is not None:
                to_code[dt] = i
        t = _tables["numpy"] = (to_code, from_code)
    return t


# ---------------------------------------------------------------------------------------------------------
# encoding
def encode(obj):
    out, bufs = bytearray(), []
    _enc(obj, out, bufs, 0)
    return bytes(out), bufs


def _enc(obj, out, bufs, depth):
    if depth > MAX_DEPTH:
        raise EncodeError("value nested deeper than %d levels" % MAX_DEPTH)
    t = type(obj)
    if obj is None:
        out += _NONE
    elif t is bool:
        out += _TRUE if obj else _FALSE
    elif t is int:
        _enc_int(obj, out)
    elif t is float:
        out += _FLOAT
        out += _F64.pack(obj)
    elif t is str:
        data = obj.encode("utf-8")
        out += _STR
        out += _U32.pack(len(data))
        out += data
    elif t is list or t is tuple:
        out += _LIST if t is list else _TUPLE
        out += _U32.pack(len(obj))
        for x in obj:
            _enc(x, out, bufs, depth + 1)
    elif t is dict:
        _enc_dict(obj, out, bufs, depth)
    else:
        _enc_other(obj, out, bufs, depth)


def _enc_int(v, out):
    if not -(1 << 63) <= v < (1 << 63):
        raise EncodeError("int %d does not fit the wire's 64 bits" % v)
    out += _INT
    out += _I64.pack(v)


def _enc_dict(obj, out, bufs, depth):
    out += _DICT
    out += _U32.pack(len(obj))
    for k, v in obj.items():
        _enc(k, out, bufs, depth + 1)
        _enc(v, out, bufs, depth + 1)


def _enc_bytes(data, out, bufs):
    if len(data) <= INLINE_BYTES:
        out += _BYTES
        out += _U32.pack(len(data))
        out += data
    else:
        out += _BYTES_BUF
        bufs.append(memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data))


def _enc_other(obj, out, bufs, depth):
    torch = sys.modules.get("torch")
    np = sys.modules.get("numpy")
    if torch is not None and isinstance(obj, torch.Tensor):
        return _enc_tensor(torch, obj, out, bufs)
    if np is not None and isinstance(obj, np.ndarray):
        return _enc_array(np, obj, out, bufs)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return _enc_bytes(bytes(obj) if isinstance(obj, memoryview) and not obj.c_contiguous else obj, out, bufs)
    if isinstance(obj, WireError):
        out += _ERROR
        out += _U8.pack(ERROR_KINDS.index(obj.kind))
        return _enc(obj.message, out, bufs, depth + 1)
    if isinstance(obj, bool):
        return _enc(bool(obj), out, bufs, depth)
    if isinstance(obj, int):
        return _enc_int(int(obj), out)
    if isinstance(obj, float):
        return _enc(float(obj), out, bufs, depth)
    if isinstance(obj, str):
        return _enc(str(obj), out, bufs, depth)
    if isinstance(obj, tuple):        # torch.Size, named tuples: plain tuples on the wire
        return _enc(tuple(obj), out, bufs, depth)
    if isinstance(obj, list):
        return _enc(list(obj), out, bufs, depth)
    if isinstance(obj, dict):          # OrderedDict: a plain dict (insertion order kept)
        return _enc_dict(obj, out, bufs, depth)
    if np is not None and isinstance(obj, np.generic):    # numpy scalars as Python ones
        if isinstance(obj, np.bool_):
            return _enc(bool(obj), out, bufs, depth)
        if isinstance(obj, np.integer):
            return _enc_int(int(obj), out)
        if isinstance(obj, np.floating):
            return _enc(float(obj), out, bufs, depth)
    raise EncodeError("%s is not a type the wire carries (None, bool, int, float, str, bytes, list, tuple, "
                      "dict, torch.Tensor, numpy.ndarray)" % type(obj).__name__)


def _shape(out, shape):
    if len(shape) > MAX_DIMS:
        raise EncodeError("a tensor of %d dimensions (at most %d)" % (len(shape), MAX_DIMS))
    out += _U8.pack(len(shape))
    for d in shape:
        out += _I64.pack(int(d))


def _enc_tensor(torch, t, out, bufs):
    if t.layout != torch.strided:
        raise EncodeError("a %s tensor: only dense (strided) tensors travel; send (rows, values)" % t.layout)
    code = _torch_tables()[0].get(t.dtype)
    if code is None:
        raise EncodeError("tensor dtype %s is not carried by the wire" % t.dtype)
    if t.requires_grad:
        t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    if not t.is_contiguous():
        t = t.contiguous()
    shape = t.shape
    if len(shape) > MAX_DIMS:
        raise EncodeError("a tensor of %d dimensions (at most %d)" % (len(shape), MAX_DIMS))
    out += _TENSOR
    out += struct.pack("<BB%dq" % len(shape), code, len(shape), *shape)
    bufs.append(memoryview(t.view(-1).view(torch.uint8).numpy()) if shape else
                memoryview(t.reshape(-1).view(torch.uint8).numpy()))


def _enc_array(np, a, out, bufs):
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    code = _numpy_tables()[0].get(a.dtype)
    if code is None:
        raise EncodeError("numpy dtype %s is not carried by the wire (no object or structured arrays)" % a.dtype)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")      # (np.ascontiguousarray would turn a 0-d array into 1-d)
    out += _ARRAY
    out += _U8.pack(code)
    _shape(out, a.shape)
    bufs.append(memoryview(a.reshape(-1).view(np.uint8)))


# ---------------------------------------------------------------------------------------------------------
# decoding
class _State:
    __slots__ = ("meta", "n", "pos", "bufs", "next_buf", "items")

    def __init__(self, meta, bufs):
        self.meta, self.n, self.pos, self.bufs, self.next_buf, self.items = meta, len(meta), 0, bufs, 0, 0


def _short(st, pos, need, what):
    return DecodeError("%s needs %d bytes at offset %d, the message has %d" % (what, need, pos, st.n))


def decode(meta, buffers=()):
    meta = bytes(meta) if not isinstance(meta, bytes) else meta
    st = _State(meta, list(buffers))
    try:
        obj = _dec(st, 0)
    except DecodeError:
        raise
    except (struct.error, UnicodeDecodeError, ValueError, TypeError, IndexError, OverflowError, RuntimeError,
            MemoryError) as e:   # a safety net: whatever slipped past the checks is still only a DecodeError
        raise DecodeError("malformed message: %s: %s" % (type(e).__name__, e)) from None
    if st.pos != st.n:
        raise DecodeError("%d trailing bytes after the message" % (st.n - st.pos))
    if st.next_buf != len(st.bufs):
        raise DecodeError("message came with %d buffers and used %d" % (len(st.bufs), st.next_buf))
    return obj


(_N, _TT, _FF, _I, _D, _S, _B, _BB, _L, _TU, _M, _X, _A, _E) = (t[0] for t in (
    _NONE, _TRUE, _FALSE, _INT, _FLOAT, _STR, _BYTES, _BYTES_BUF, _LIST, _TUPLE, _DICT, _TENSOR, _ARRAY, _ERROR))


def _u32(st, pos, what):
    if pos + 4 > st.n:
        raise _short(st, pos, 4, what)
    return _U32.unpack_from(st.meta, pos)[0]


def _count(st, pos, what):
    n = _u32(st, pos, what)
    left = st.n - pos - 4
    if n > left:     # every element takes at least one byte: a bigger count is a lie
        raise DecodeError("%s declares %d elements, only %d bytes follow" % (what, n, left))
    st.items += n
    if st.items > MAX_ITEMS:
        raise DecodeError("message holds more than %d values" % MAX_ITEMS)
    return n


def _buffer(st, what):
    i = st.next_buf
    if i >= len(st.bufs):
        raise DecodeError("%s refers to buffer %d, the message has %d" % (what, i, len(st.bufs)))
    st.next_buf = i + 1
    return st.bufs[i]


def _dec(st, depth):
    if depth > MAX_DEPTH:
        raise DecodeError("message nested deeper than %d levels" % MAX_DEPTH)
    meta, pos = st.meta, st.pos
    if pos >= st.n:
        raise _short(st, pos, 1, "a tag")
    tag = meta[pos]
    pos += 1
    st.pos = pos
    if tag == _S or tag == _B:
        n = _u32(st, pos, "a string's length" if tag == _S else "a bytes length")
        pos += 4
        end = pos + n
        if end > st.n:
            raise _short(st, pos, n, "a string" if tag == _S else "a bytes value")
        st.pos = end
        return meta[pos:end].decode("utf-8") if tag == _S else meta[pos:end]
    if tag == _I or tag == _D:
        if pos + 8 > st.n:
            raise _short(st, pos, 8, "an int" if tag == _I else "a float")
        st.pos = pos + 8
        return (_I64 if tag == _I else _F64).unpack_from(meta, pos)[0]
    if tag == _L or tag == _TU:
        n = _count(st, pos, "a list")
        st.pos = pos + 4
        items = [_dec(st, depth + 1) for _ in range(n)]
        return items if tag == _L else tuple(items)
    if tag == _X:
        return _dec_tensor(st)
    if tag == _N:
        return None
    if tag == _TT:
        return True
    if tag == _FF:
        return False
    if tag == _M:
        n = _count(st, pos, "a dict")
        st.pos = pos + 4
        out = {}
        for _ in range(n):
            k = _dec(st, depth + 1)
            try:
                hash(k)
            except TypeError:
                raise DecodeError("a dict key of type %s is not hashable" % type(k).__name__) from None
            out[k] = _dec(st, depth + 1)
        return out
    if tag == _BB:
        return _buf_bytes(_buffer(st, "a bytes value"))
    if tag == _A:
        return _dec_array(st)
    if tag == _E:
        if pos + 1 > st.n:
            raise _short(st, pos, 1, "an error kind")
        k = meta[pos]
        st.pos = pos + 1
        if k >= len(ERROR_KINDS):
            raise DecodeError("unknown error kind %d" % k)
        msg = _dec(st, depth + 1)
        if type(msg) is not str:
            raise DecodeError("an error's message is a %s, not a string" % type(msg).__name__)
        return WireError(ERROR_KINDS[k], msg)
    raise DecodeError("unknown tag %r at offset %d" % (bytes([tag]), pos - 1))


def _dec_head(st, what):
    """(dtype code, shape, element count) of a tensor or an array."""
    pos = st.pos
    if pos + 2 > st.n:
        raise _short(st, pos, 2, "%s's dtype and rank" % what)
    code, nd = st.meta[pos], st.meta[pos + 1]
    pos += 2
    if nd > MAX_DIMS:
        raise DecodeError("%s of %d dimensions (at most %d)" % (what, nd, MAX_DIMS))
    if pos + 8 * nd > st.n:
        raise _short(st, pos, 8 * nd, "%s's shape" % what)
    shape = struct.unpack_from("<%dq" % nd, st.meta, pos)
    st.pos = pos + 8 * nd
    n = 1
    for d in shape:
        if d < 0:
            raise DecodeError("%s has a negative dimension %s" % (what, list(shape)))
        n *= d
    return code, shape, n


def _buf_len(buf):
    return buf.numel() if hasattr(buf, "numel") else memoryview(buf).nbytes


def _buf_bytes(buf):
    if hasattr(buf, "numel"):      # a torch uint8 tensor from the frame reader
        return buf.numpy().tobytes()
    return bytes(buf)


def _check_len(buf, n, size, what, shape):
    if _buf_len(buf) != n * size:
        raise DecodeError("%s of shape %s needs %d bytes, its buffer holds %d" % (what, list(shape), n * size,
                                                                                   _buf_len(buf)))


def _dec_tensor(st):
    code, shape, n = _dec_head(st, "a tensor")
    from_code = _torch_tables()[1]
    if code >= len(from_code) or from_code[code][0] is None:
        raise DecodeError("unknown tensor dtype code %d" % code)
    dtype, size = from_code[code]
    buf = _buffer(st, "a tensor")
    _check_len(buf, n, size, "a tensor", shape)
    if not isinstance(buf, torch.Tensor):
        data = bytearray(buf)          # a writable copy (tests and small callers hand bytes)
        buf = torch.frombuffer(data, dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
    return buf.view(dtype).reshape(shape)


def _dec_array(st):
    code, shape, n = _dec_head(st, "an array")
    from_code = _numpy_tables()[1]
    if code >= len(from_code) or from_code[code][0] is None:
        raise DecodeError("unknown array dtype code %d" % code)
    dtype, size = from_code[code]
    buf = _buffer(st, "an array")
    _check_len(buf, n, size, "an array", shape)
    raw = buf.numpy() if hasattr(buf, "numel") else np.frombuffer(bytearray(buf), dtype=np.uint8)
    return raw.view(dtype).reshape(shape)
