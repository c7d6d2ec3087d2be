"""Feeding and fetching a lowered block: FeedSpec checks and converts each fed value as Paddle does (dtype,
fluid.data's shape, LoD), PreparedRun runs the lowered code and returns the fetches as Executor.run does.
Used by fluid.Executor, the DataLoader's `read` kernel and the data-parallel runner. torch loads on first use.
"""

import numpy as np

from ..ir import LoDTensor, ScopeVar, SelectedRows, Variable, as_fetch, dtype_name, lod_as_tensors
from ..ir.lazy import torch

__all__ = ["FeedSpec", "PreparedRun", "fetch_names_of"]


def fetch_names_of(fetch_list):
    """Executor.run's fetch_list (Variables or names, or one of either) -> variable names."""
    if fetch_list is None:
        return []
    if isinstance(fetch_list, (Variable, str)):
        fetch_list = [fetch_list]
    if not isinstance(fetch_list, (list, tuple)):
        raise TypeError("fetch_list must be a list of Variables or names, got %s" % type(fetch_list).__name__)
    names = []
    for f in fetch_list:
        if isinstance(f, Variable):
            names.append(f.name)
        elif isinstance(f, str):
            names.append(f)
        else:
            raise TypeError("fetch_list items must be Variables or variable names, got %r" % (f,))
    return names


class FeedSpec:
    """How one fed variable is checked and turned into what the lowered code takes (a tensor, or (tensor, LoD)
    for a LoD variable) on the run's device."""

    __slots__ = ("name", "np_dtype", "torch_dtype", "shape", "check", "lod", "device")

    def __init__(self, var, device):
        self.name = var.name
        self.np_dtype = np.dtype(dtype_name(var.dtype))
        self.torch_dtype = getattr(torch, self.np_dtype.name)
        self.shape = tuple(var.shape)
        self.check = var.need_check_feed
        self.lod = var.lod_level > 0
        self.device = device

    def convert(self, value):
        lod = None
        if isinstance(value, LoDTensor):
            t, lod = value._holder.value, value._holder.lod
            if t is None:
                raise ValueError("feed '%s': the LoDTensor holds no data" % self.name)
            shape = t.shape
            if t.dtype != self.torch_dtype:
                raise ValueError("feed '%s': expected dtype %s, got %s" % (self.name, self.np_dtype.name,
                                                                          str(t.dtype)[6:]))
        elif isinstance(value, torch.Tensor):
            t, shape = value, tuple(value.shape)
        else:
            if self.lod and isinstance(value, list):
                raise ValueError("feed '%s' is a LoD variable: a Python list cannot carry its sequence lengths; "
                                 "feed a LoDTensor (fluid.create_lod_tensor(data, [lengths], place)) or use "
                                 "fluid.DataFeeder" % self.name)
            if not isinstance(value, np.ndarray) and np.isscalar(value):
                # a Python / NumPy scalar is a [1] tensor of the variable's dtype (Paddle's _as_lodtensor)
                value = np.array([value]).astype(self.np_dtype)
            arr = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=self.np_dtype)
            if arr.dtype != self.np_dtype:
                raise ValueError("feed '%s': expected dtype %s, got %s (cast it with .astype('%s'))"
                                 % (self.name, self.np_dtype.name, arr.dtype.name, self.np_dtype.name))
            if not arr.flags.c_contiguous or not arr.flags.writeable:
                arr = np.array(arr, copy=True, order="C")
            t, shape = torch.from_numpy(arr), arr.shape
        if self.check:
            want = self.shape
            if len(shape) != len(want) or any(w >= 0 and w != g for w, g in zip(want, shape)):
                raise ValueError("feed '%s': expected shape %s, got %s" % (self.name, list(want), list(shape)))
        if self.device != "cpu" and t.device.type == "cpu":
            t = t.to(self.device)
        if self.lod:   # a LoD fed to a lod_level=0 variable is dropped: no op could read it
            if lod:
                last = lod[-1]
                # a CPU tensor's last offset from tolist(): indexing the tensor costs four torch dispatches
                rows = int(last.tolist()[-1] if isinstance(last, torch.Tensor) and last.is_cpu
                           else last[-1])
                if rows != shape[0]:
                    raise ValueError("feed '%s': its LoD covers %d rows but the tensor has %d"
                                     % (self.name, rows, shape[0]))
                lod = lod_as_tensors(lod, self.device)
            return (t, lod)
        return t


class PreparedRun:
    """A lowered block with its feed specs: run(feed, return_numpy) -> the fetched values as Executor.run
    returns them (numpy arrays, or LoDTensors / SelectedRows with return_numpy=False)."""

    def __init__(self, lowered, feed_specs):
        self.lowered = lowered
        self.feed_specs = feed_specs
        self.fetch_persistable = lowered.fetch_persistable

    def run(self, feed, return_numpy):
        feeds = [spec.convert(feed[spec.name]) for spec in self.feed_specs]
        results = self.lowered(feeds)
        out = []
        for (t, lod), persist in zip(results, self.fetch_persistable):
            if return_numpy and not lod and type(t) is torch.Tensor and t.is_cpu and not t.is_sparse and \
                    t.dtype is not torch.bfloat16:
                a = t.detach().numpy()      # (the usual fetch, a loss: the checks below have nothing to do)
                out.append(as_fetch(a.copy() if persist else a))
                continue
            if isinstance(t, list):   # a LoDTensorArray: a list of its elements, as Paddle returns it
                out.append(self._array(t, return_numpy))
                continue
            if t is not None and getattr(t, "is_sparse", False):
                # a row-sparse gradient: numpy gets the dense array (repeated rows added up),
                # return_numpy=False the rows themselves
                if not return_numpy:
                    out.append(SelectedRows._from_torch(t))
                    continue
                t = t.to_dense()
            if return_numpy:
                if lod:
                    raise RuntimeError("Some of your fetched tensors hold LoD information. They can not be "
                                       "completely cast to Python ndarray. Please set the parameter "
                                       "'return_numpy' as 'False' to return LoDTensor itself directly.")
                if getattr(t, "dtype", None) is not None and str(t.dtype) == "torch.bfloat16":
                    t = t.float()   # numpy has no bfloat16 (our AMP extension): fetched as float32, exactly
                a = t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)
                out.append(as_fetch(a.copy() if persist else a))
            else:
                out.append(LoDTensor(_holder=ScopeVar(value=t.detach() if hasattr(t, "detach") else t, lod=lod)))
        return out


    @staticmethod
    def _array(arr, return_numpy):
        lods = getattr(arr, "lods", None) or [None] * len(arr)
        out = []
        for t, lod in zip(arr, lods):
            if t is None:
                out.append(None)
            elif return_numpy:
                if lod:
                    raise RuntimeError("Some of your fetched tensors hold LoD information. They can not be "
                                       "completely cast to Python ndarray. Please set the parameter "
                                       "'return_numpy' as 'False' to return LoDTensor itself directly.")
                out.append(as_fetch(t.detach().cpu().numpy().copy()))
            else:
                out.append(LoDTensor(_holder=ScopeVar(value=t.detach(), lod=lod)))
        return out
