"""The inference API's data types: PaddleDType, PaddlePlace, PaddleBuf, PaddleTensor and the zero-copy
tensors a predictor hands out."""

import enum

import numpy as np


class _PyEnum(enum.IntEnum):
    """An int enum that prints as pybind11's enums do (PaddleDType.FLOAT32)."""

    def __str__(self):
        return "%s.%s" % (type(self).__name__, self.name)

    __repr__ = __str__


class PaddleDType(_PyEnum):
    FLOAT32 = 0
    INT64 = 1
    INT32 = 2


class PaddlePlace(_PyEnum):
    UNK = -1
    CPU = 0
    GPU = 1


_NP_OF = {PaddleDType.FLOAT32: np.dtype("float32"), PaddleDType.INT64: np.dtype("int64"),
          PaddleDType.INT32: np.dtype("int32")}
_DTYPE_OF = {v: k for k, v in _NP_OF.items()}


def _dtype_of_array(arr, what):
    d = _DTYPE_OF.get(np.dtype(arr.dtype))
    if d is None:
        raise TypeError("%s: PaddleTensor holds float32, int64 or int32 data, got %s (cast it with .astype())"
                        % (what, np.dtype(arr.dtype).name))
    return d


class PaddleBuf:
    """A byte buffer: PaddleBuf(nbytes), PaddleBuf([floats]) or PaddleBuf(ndarray of float32/int64/int32)."""

    def __init__(self, data=0):
        self._bytes = np.zeros(0, dtype=np.uint8)
        if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
            self.resize(int(data))
        else:
            self.reset(data)

    def reset(self, data):
        if isinstance(data, np.ndarray):
            _dtype_of_array(data, "PaddleBuf")
            arr = np.ascontiguousarray(data)
        else:
            arr = np.asarray(list(data), dtype=np.float32)
        self._bytes = arr.reshape(-1).view(np.uint8).copy()

    def resize(self, nbytes):
        if nbytes < 0:
            raise ValueError("PaddleBuf.resize: size must be >= 0, got %d" % nbytes)
        old = self._bytes
        self._bytes = np.zeros(nbytes, dtype=np.uint8)
        self._bytes[:min(nbytes, old.size)] = old[:nbytes]

    def length(self):
        return int(self._bytes.size)

    def empty(self):
        return self._bytes.size == 0

    def _view(self, dtype):
        dtype = np.dtype(dtype)
        n = self._bytes.size // dtype.itemsize
        return self._bytes[:n * dtype.itemsize].view(dtype)

    def float_data(self):
        return self._view(np.float32).tolist()

    def int64_data(self):
        return self._view(np.int64).tolist()

    def int32_data(self):
        return self._view(np.int32).tolist()

    def tolist(self, dtype):
        if dtype not in ("float32", "int64", "int32"):
            raise ValueError("PaddleBuf.tolist: dtype must be 'float32', 'int64' or 'int32', got %r" % (dtype,))
        return self._view(dtype).tolist()

    def __repr__(self):
        return "PaddleBuf(%d bytes)" % self.length()


class PaddleTensor:
    """An input or output of PaddlePredictor.run: name, shape, lod (offsets, Paddle's form), dtype, data."""

    # shape and lod read back as lists whatever was assigned (a tuple shape, numpy offsets), as in Paddle
    shape = property(lambda self: self._shape,
                     lambda self, v: setattr(self, "_shape", [int(d) for d in v]))
    lod = property(lambda self: self._lod,
                   lambda self, v: setattr(self, "_lod", [[int(x) for x in level] for level in (v or [])]))

    def __init__(self, data=None, name="", lod=None, copy=True):
        self.name = name
        self.lod = lod
        if data is None:
            self.shape, self.dtype, self.data = [], PaddleDType.FLOAT32, PaddleBuf()
            return
        arr = data if isinstance(data, np.ndarray) else np.asarray(data)
        self.dtype = _dtype_of_array(arr, "PaddleTensor %r" % name if name else "PaddleTensor")
        self.shape = [int(s) for s in arr.shape]
        self.data = PaddleBuf(arr)

    def as_ndarray(self):
        dtype = _NP_OF[PaddleDType(int(self.dtype))]
        flat = self.data._view(dtype)
        n = int(np.prod(self.shape)) if self.shape else flat.size
        if flat.size != n:
            raise ValueError("PaddleTensor %r: shape %s needs %d %s values, its data holds %d"
                             % (self.name, list(self.shape), n, dtype.name, flat.size))
        return flat.reshape([int(s) for s in self.shape] if self.shape else [n]).copy()

    def __repr__(self):
        return "PaddleTensor(name=%r, shape=%s, dtype=%s, lod=%s)" % (self.name, self.shape, self.dtype, self.lod)


class ZeroCopyTensor:
    """One input or output of a predictor, by name (get_input_tensor / get_output_tensor)."""

    def __init__(self, predictor, name, is_input):
        self._p, self._name, self._input = predictor, name, is_input

    def name(self):
        return self._name

    def reshape(self, shape):
        if not self._input:
            raise ValueError("ZeroCopyTensor.reshape: '%s' is an output" % self._name)
        self._p._in_shape[self._name] = [int(s) for s in shape]

    def copy_from_cpu(self, data):
        if not self._input:
            raise ValueError("ZeroCopyTensor.copy_from_cpu: '%s' is an output of the model" % self._name)
        arr = np.array(data, copy=True)
        self._p._in_data[self._name] = arr
        self._p._in_shape[self._name] = list(arr.shape)

    def set_lod(self, lod):
        if not self._input:
            raise ValueError("ZeroCopyTensor.set_lod: '%s' is an output of the model" % self._name)
        self._p._in_lod[self._name] = [[int(x) for x in level] for level in lod]

    def lod(self):
        if self._input:
            return [list(level) for level in self._p._in_lod.get(self._name, [])]
        return self._p._output(self._name)[1]

    def shape(self):
        if self._input:
            return list(self._p._in_shape.get(self._name, []))
        return list(self._p._output(self._name)[0].shape)

    def type(self):
        if self._input:
            arr = self._p._in_data.get(self._name)
            return _DTYPE_OF.get(arr.dtype if arr is not None else self._p._var_dtype(self._name),
                                 PaddleDType.FLOAT32)
        return _DTYPE_OF.get(self._p._output(self._name)[0].dtype, PaddleDType.FLOAT32)

    def copy_to_cpu(self):
        if self._input:
            arr = self._p._in_data.get(self._name)
            if arr is None:
                raise ValueError("ZeroCopyTensor.copy_to_cpu: input '%s' holds no data yet" % self._name)
            return arr.copy()
        return self._p._output(self._name)[0].copy()


# -- configs ----------------------------------------------------------------------------------------
