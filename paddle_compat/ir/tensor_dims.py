"""LoDTensor's low-level methods that Paddle's op tests call (core.LoDTensor inherits them):
_set_dims / _get_dims, _alloc_float / _alloc_int / _alloc_double / _mutable_data, and the flat element access
_get_float_element / _set_float_element / _get_double_element / _set_double_element (op_test.py's numeric
gradient perturbs one element at a time through them), and slicing (tensor[1:, ::-1]).

Where Paddle resizes a tensor without memory and allocates it uninitialized, the tensor here holds zeros of
the new shape (a torch tensor always has storage); reading one before writing it is undefined in Paddle.
"""

import numbers

import numpy as np

from .dtypes import VarType, convert_dtype, dtype_name
from .lazy import torch
from .places import CPUPlace, CUDAPlace, torch_device

__all__ = ["TensorDims"]


class TensorDims:
    """Mixed into core.LoDTensor, whose `_holder.value` is a torch tensor (or None)."""

    def _set_dims(self, dims):
        dims = [int(d) for d in dims]
        old = self._holder.value
        if isinstance(old, torch.Tensor) and old.numel() == _numel(dims):
            self._holder.value = old.reshape(dims)
        else:
            dtype = old.dtype if isinstance(old, torch.Tensor) else torch.float32
            self._holder.value = torch.zeros(dims, dtype=dtype)

    def _get_dims(self):
        return self.shape()

    def _alloc(self, dtype, place=None):
        want = getattr(torch, dtype_name(convert_dtype(dtype)))
        old = self._holder.value
        dims = list(old.shape) if isinstance(old, torch.Tensor) else [0]
        if not (isinstance(old, torch.Tensor) and old.dtype == want):
            self._holder.value = torch.zeros(dims, dtype=want)
        if place is not None:
            dev = torch_device(place)
            if str(self._holder.value.device) != dev:
                self._holder.value = self._holder.value.to(dev)
        return self._holder.value

    def _alloc_float(self, place=None):
        self._alloc(VarType.FP32, place)

    def _alloc_double(self, place=None):
        self._alloc(VarType.FP64, place)

    def _alloc_int(self, place=None):
        self._alloc(VarType.INT32, place)

    def _mutable_data(self, place, dtype):
        """Allocates (as _alloc_*) and returns the data's address, an integer, as Paddle does."""
        return int(self._alloc(dtype, place).data_ptr())

    def _place(self):
        """Where the data lives: CPUPlace, or CUDAPlace(i)."""
        t = self._holder.value
        dev = getattr(t, "device", None)
        return CUDAPlace(dev.index or 0) if dev is not None and dev.type == "cuda" else CPUPlace()

    def __getitem__(self, index):
        """A new LoDTensor (no LoD) holding `tensor[index]` with NumPy's slicing rules (negative steps too),
        as Paddle's Tensor slicing gives."""
        out = type(self)()
        out.set(np.array(np.asarray(self)[index]), None)
        return out

    def _element(self, i, dtype):
        t = self._holder.value
        if t is None:
            raise RuntimeError("tensor %r is not initialized" % (self._holder.name or "",))
        if i < 0 or i >= t.numel():
            raise IndexError("element %d of a tensor of %d elements" % (i, t.numel()))
        return t.reshape(-1)[i]

    def _get_float_element(self, i):
        return float(self._element(i, VarType.FP32))

    def _get_double_element(self, i):
        return float(self._element(i, VarType.FP64))

    def _set_float_element(self, i, value):
        self._set_element(i, value)

    def _set_double_element(self, i, value):
        self._set_element(i, value)

    def _set_element(self, i, value):
        if not isinstance(value, numbers.Number) and getattr(value, "size", 1) != 1:
            raise TypeError("element value must be a number, got %r" % (value,))
        t = self._holder.value
        self._element(i, None)      # bounds check
        flat = t.reshape(-1)
        if flat.data_ptr() != t.data_ptr() or not t.is_contiguous():
            t = t.contiguous()
            flat = t.reshape(-1)
            self._holder.value = t
        with torch.no_grad():
            flat[i] = float(value)


def _numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n
