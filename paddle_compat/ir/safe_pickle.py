"""Reading pickled files without running code: Paddle's `.pdparams` / `.pdopt` (fluid.save, save_dygraph),
state dicts users pickled themselves, and the dataset pickles paddle.dataset reads.

pickle.load calls whatever callable a file names, so a crafted `.pdparams` runs any command (Paddle 1.8 has
that hole). Here a file can name only a closed table of our own constructors (TABLE), each of which builds
plain data and calls nothing the file chose:

    numpy.ndarray, numpy.core.multiarray._reconstruct    an array (numpy.ndarray(shape, dtype, bytes) is the
                                                         form this package writes, see io_state._dumps)
    numpy.dtype                                          a numeric or bool dtype (no object, no fields)
    numpy.core.multiarray.scalar                         a numeric or bool numpy scalar
    numpy.core.numeric._frombuffer                       an array, as numpy >= 1.16 pickles with protocol 5
    _codecs.encode(str, 'latin1'), builtins.bytes()      bytes, as protocols < 3 spell them in Python 3
    builtins.set / frozenset                             (protocol 2 spells sets so)

with `numpy._core.*` (numpy 2) and `numpy.core.*` (numpy 1) both accepted, and Python 2's `__builtin__`.
The files Paddle 1.8.5 writes and reads name ndarray, _reconstruct, dtype, scalar and _codecs.encode
(tests/data/paddle18/pickles.json, recorded by make_pickles.py). The
constructors return placeholders whose values are numpy objects made by our code from checked bytes; one
pass at the end swaps them in and refuses any object that is not a number, string, bytes, None, container,
array or numpy scalar. Opcodes that could reach objects outside the table (EXT*, which consults copyreg's
cache before find_class; persistent ids; out-of-band buffers) are refused by a scan that runs before anything
is unpickled.
"""

import pickle
import pickletools
import re
import struct

import numpy as np

__all__ = ["UnsafePickleError", "load", "load_path"]


class UnsafePickleError(ValueError):
    """A pickled file asks for something other than numpy arrays and plain containers; nothing in it ran."""


_LIMITS = ("numpy arrays of numeric or bool dtype, numpy scalars, numbers, strings, bytes and "
           "dicts/lists/tuples/sets of those")
# EXT* look in copyreg's extension cache before calling find_class. (INST, OBJ, NEWOBJ and REDUCE can only
# call what find_class gave, i.e. the table's constructors: they stay, so a refusal names the global.)
_FORBIDDEN_OPS = {"EXT1", "EXT2", "EXT4", "PERSID", "BINPERSID", "NEXT_BUFFER", "READONLY_BUFFER"}
_DTYPE = re.compile(r"^([<>|=]?)(b1|[iu][1248]|f[248]|c8|c16)$")
_PLAIN = (str, bytes, bytearray, int, float, complex, bool, type(None))


class _Refused(Exception):
    """Raised inside the unpickler; load() names the file."""


def _text(v, what):
    if isinstance(v, bytes):        # Python 2 pickles read with encoding="bytes"
        v = v.decode("latin1")
    if not isinstance(v, str):
        raise _Refused("%s must be a string, got %s" % (what, type(v).__name__))
    return v


def _raw(v):
    if isinstance(v, str):          # Python 2 pickles read with encoding="latin1": bytes arrive as str
        v = v.encode("latin1")
    if not isinstance(v, (bytes, bytearray)):
        raise _Refused("array data must be bytes, got %s (object arrays are refused)" % type(v).__name__)
    return v


def _dtype_of(d):
    if isinstance(d, _Dtype):
        return d.get()
    code = _text(d, "a dtype")
    m = _DTYPE.match(code)
    if m is None:
        raise _Refused("dtype %r is refused (only bool and numeric dtypes)" % code)
    return np.dtype(code)


def _shape(s):
    if isinstance(s, int) and not isinstance(s, bool):
        s = (s,)
    if not isinstance(s, tuple) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in s):
        raise _Refused("array shape must be a tuple of non-negative ints, got %r" % (s,))
    return s


def _array(shape, dtype, data, fortran=False):
    shape, dtype, data = _shape(shape), _dtype_of(dtype), _raw(data)
    count = 1
    for n in shape:
        count *= n
    if count * dtype.itemsize != len(data):   # checked before numpy allocates anything
        raise _Refused("array of shape %s and dtype %s needs %d bytes, the file holds %d"
                       % (list(shape), dtype, count * dtype.itemsize, len(data)))
    return np.frombuffer(data, dtype, count).reshape(shape, order="F" if fortran else "C").copy(order="K")


class _Pending:
    """What a table constructor returns. Only _Dtype and _ArrayState accept pickle's BUILD (the state numpy's
    own pickles carry); every other BUILD is refused."""
    __slots__ = ("value",)

    def __init__(self, value=None):
        self.value = value

    def __setstate__(self, state):
        raise _Refused("unexpected state for a %s" % type(self.value).__name__)


class _Value(_Pending):
    __slots__ = ()


class _Dtype(_Pending):
    __slots__ = ("code", "endian")

    def __init__(self, code):
        super().__init__()
        m = _DTYPE.match(code)
        if m is None:
            raise _Refused("dtype %r is refused (only bool and numeric dtypes)" % code)
        self.code, self.endian = m.group(2), m.group(1)

    def __setstate__(self, state):
        # numpy's state of a plain dtype: (3, endian, None, None, None, -1, -1, 0) (4: + metadata None)
        if not (isinstance(state, tuple) and len(state) in (8, 9) and state[0] in (3, 4)):
            raise _Refused("unexpected dtype state %r" % (state,))
        endian = _text(state[1], "a dtype's byte order")
        rest = state[2:]
        if endian not in "<>|=" or len(endian) != 1 or rest[:3] != (None, None, None) or \
                rest[3:6] != (-1, -1, 0) or any(x is not None for x in rest[6:]):
            raise _Refused("dtype state %r is refused (no subarrays, fields, object flags or metadata)"
                           % (state,))
        self.endian = endian

    def get(self):
        d = np.dtype(self.code)
        return d.newbyteorder(self.endian) if self.endian in "<>" else d


class _ArrayState(_Pending):
    __slots__ = ()

    def __setstate__(self, state):
        # numpy's ndarray state: (version, shape, dtype, is_fortran, data), or without the version
        if self.value is not None or not isinstance(state, tuple) or len(state) not in (4, 5):
            raise _Refused("unexpected array state")
        shape, dtype, fortran, data = state[-4:]
        self.value = _array(shape, dtype, data, bool(fortran))


class _Ctor:
    """A table entry: callable by the file, and immutable: pickle's BUILD on it (which would set attributes,
    for the rest of the process) is refused."""
    __slots__ = ("name", "fn")

    def __init__(self, name, fn):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "fn", fn)

    def __call__(self, *args):
        return self.fn(*args)

    def __setstate__(self, state):
        raise _Refused("setting state on the constructor %s is refused" % self.name)

    def __setattr__(self, key, value):
        raise _Refused("setting attributes of the constructor %s is refused" % self.name)

    def __reduce__(self):
        raise TypeError("internal constructor")


def _ndarray(shape, dtype, buffer, offset=0, strides=None, order=None):
    if offset != 0 or strides is not None or order not in (None, "C"):
        raise _Refused("numpy.ndarray(...) with offset/strides/order is refused")
    return _Value(_array(shape, dtype, buffer))


def _reconstruct(cls, shape, typecode):
    if cls is not _NDARRAY:
        raise _Refused("_reconstruct of %r is refused (plain numpy.ndarray only)" % (cls,))
    return _ArrayState()


def _dtype(code, align=False, copy=True):
    return _Dtype(_text(code, "a dtype"))


def _scalar(dtype, data=None):
    if data is None:
        raise _Refused("a numpy scalar without data is refused")
    return _Value(_array((), dtype, data)[()])


def _frombuffer(buf, dtype, shape, order):
    if order not in ("C", "F"):
        raise _Refused("array order %r is refused" % (order,))
    return _Value(_array(shape, dtype, buf, order == "F"))


def _encode(text, encoding="utf-8"):
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise _Refused("_codecs.encode is accepted for (str, 'latin1') only")
    return text.encode("latin1")


def _empty_bytes(*args):
    if args:    # bytes(n) would allocate n bytes: protocols < 3 spell only b"" this way
        raise _Refused("bytes(...) with arguments is refused")
    return b""


def _container(kind):
    def build(items=()):
        if not isinstance(items, (list, tuple)):
            raise _Refused("%s(...) of a %s is refused" % (kind.__name__, type(items).__name__))
        return kind(items)
    return build


_NDARRAY = _Ctor("numpy.ndarray", _ndarray)
TABLE = {("numpy", "ndarray"): _NDARRAY, ("numpy", "dtype"): _Ctor("numpy.dtype", _dtype),
         ("_codecs", "encode"): _Ctor("_codecs.encode", _encode)}
for _core in ("numpy.core", "numpy._core"):
    TABLE[(_core + ".multiarray", "_reconstruct")] = _Ctor("_reconstruct", _reconstruct)
    TABLE[(_core + ".multiarray", "scalar")] = _Ctor("scalar", _scalar)
    TABLE[(_core + ".numeric", "_frombuffer")] = _Ctor("_frombuffer", _frombuffer)
for _mod in ("builtins", "__builtin__"):
    TABLE[(_mod, "set")] = _Ctor("set", _container(set))
    TABLE[(_mod, "frozenset")] = _Ctor("frozenset", _container(frozenset))
    TABLE[(_mod, "bytes")] = _Ctor("bytes", _empty_bytes)


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        ctor = TABLE.get((module, name))
        if ctor is None:
            raise _Refused("it names the global %s.%s, which is not one of the constructors a data file "
                           "may use" % (module, name))
        return ctor

    def persistent_load(self, pid):
        raise _Refused("persistent ids are refused")


_OPS = {op.code.encode("latin1"): op for op in pickletools.opcodes}
_LENGTH = {pickletools.TAKEN_FROM_ARGUMENT1: "<B", pickletools.TAKEN_FROM_ARGUMENT4: "<i",
           pickletools.TAKEN_FROM_ARGUMENT4U: "<I", pickletools.TAKEN_FROM_ARGUMENT8U: "<Q"}


def _scan(f):
    """Walk the opcodes up to STOP as the unpickler will, building nothing (an argument is skipped by its
    encoded length: a big array costs a seek), and refuse _FORBIDDEN_OPS. (pickletools.genops would read
    every argument, and cannot decode Python 2's protocol-0 strings.)"""
    while True:
        pos = f.tell()
        code = f.read(1)
        op = _OPS.get(code)
        if op is None:
            raise _Refused("%s at byte %d" % ("unknown opcode %r" % code if code else "no STOP opcode", pos))
        if op.name in _FORBIDDEN_OPS:
            raise _Refused("opcode %s at byte %d is refused" % (op.name, pos))
        if op.name == "STOP":
            return
        arg = op.arg
        if arg is None:
            continue
        if arg.n >= 0:
            f.seek(arg.n, 1)
        elif arg.n == pickletools.UP_TO_NEWLINE:
            for _ in range(2 if arg.name == "stringnl_noescape_pair" else 1):
                if not f.readline().endswith(b"\n"):
                    raise _Refused("the file ends inside opcode %s at byte %d" % (op.name, pos))
        else:
            fmt = _LENGTH[arg.n]
            raw = f.read(struct.calcsize(fmt))
            if len(raw) != struct.calcsize(fmt):
                raise _Refused("the file ends inside opcode %s at byte %d" % (op.name, pos))
            n = struct.unpack(fmt, raw)[0]
            if n < 0:
                raise _Refused("negative length in opcode %s at byte %d" % (op.name, pos))
            f.seek(n, 1)


def _resolve(obj, memo, depth=0):
    """The unpickled object with placeholders replaced by their numpy values; anything else refused."""
    if isinstance(obj, _PLAIN):
        return obj
    if isinstance(obj, _Dtype):
        return obj.get()
    if isinstance(obj, _Pending):
        if obj.value is None:
            raise _Refused("an array without data")
        return obj.value
    if depth > 200:
        raise _Refused("containers nested more than 200 deep")
    key = id(obj)
    if key in memo:
        return memo[key]
    t = type(obj)
    if t is list:
        memo[key] = obj
        obj[:] = [_resolve(v, memo, depth + 1) for v in obj]
        return obj
    if t is dict:
        memo[key] = obj
        items = [(_resolve(k, memo, depth + 1), _resolve(v, memo, depth + 1)) for k, v in obj.items()]
        obj.clear()
        obj.update(items)
        return obj
    if t in (tuple, set, frozenset):
        out = memo[key] = t(_resolve(v, memo, depth + 1) for v in obj)
        return out
    if isinstance(obj, _Ctor):
        raise _Refused("it holds the constructor %s itself, not data" % obj.name)
    raise _Refused("it holds a %s object" % t.__name__)


def load(f, what, encoding="latin1"):
    """The data pickled in the binary file object `f` (seekable), built with TABLE only. `what` names the
    file in errors. encoding="latin1" reads Python 2 pickles as Paddle does (numpy data stays intact)."""
    start = f.tell()
    try:
        _scan(f)
        f.seek(start)
        return _resolve(_Unpickler(f, encoding=encoding).load(), {})
    except _Refused as e:
        raise UnsafePickleError("refused to load %s: %s (files read with pickle here may hold %s only; "
                                "nothing in the file was run)" % (what, e, _LIMITS)) from None
    except Exception as e:  # noqa: BLE001  (a truncated or corrupt file, a numpy error on its bytes)
        raise ValueError("cannot read %s as a pickle: %s: %s" % (what, type(e).__name__, e)) from None


def load_path(path, encoding="latin1"):
    with open(path, "rb") as f:
        return load(f, path, encoding)
