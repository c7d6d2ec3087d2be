"""Feeding and fetching a lowered block: FeedSpec checks and converts each fed value as Paddle does (dtype,
fluid.data's shape, LoD), PreparedRun runs the lowered code and returns the fetches as Executor.run does.
Used by fluid.Executor, the DataLoader's `read` kernel and the data-parallel runner. torch loads on first use.
"""

import numpy as np

from ..ir import LoDTensor, ScopeVar, SelectedRows, Variable, as_fetch, dtype_name, lod_as_tensors
from ..ir.lazy import torch
from ..ops import info
from ..ops.defs.lookup_table import mark_checked

__all__ = ["FeedSpec", "PreparedRun", "fetch_names_of", "index_bounds"]


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


def index_bounds(block):
    """{fed name: (bound, error)} for the variables an op of this block reads as indices (its `fed_index`
    fact: a lookup's ids, one_hot's labels; the smallest bound when several do). A device step checks such a
    feed on the host before uploading it (FeedSpec): no sync, and the only check a CUDA-graph replay gets
    (it runs no Python)."""
    out = {}
    for op in block.ops:
        fact = info(op.type).fed_index
        got = fact(op, block) if fact is not None else None
        if got is not None and (got[0] not in out or got[1] < out[got[0]][0]):
            out[got[0]] = got[1:]
    return out


class FeedSpec:
    """How one fed variable is checked and turned into what the lowered code takes (a tensor, or (tensor, LoD)
    for a LoD variable) on the run's device."""

    __slots__ = ("name", "np_dtype", "torch_dtype", "shape", "check", "lod", "device", "index_bound")

    def __init__(self, var, device, fed_lod=False, index_bound=None):
        """fed_lod: the value fed when the run was prepared carries a LoD; it is kept even when the variable
        declares lod_level=0, as Paddle keeps it (lod_rank_table(x, level=1) of a layers.data x).
        index_bound: (bound, error) when an op reads the variable as indices (index_bounds): on a device its
        values are checked against [0, bound) on the host, before the upload."""
        self.name = var.name
        self.np_dtype = np.dtype(dtype_name(var.dtype))
        self.torch_dtype = getattr(torch, self.np_dtype.name)
        self.shape = tuple(var.shape)
        self.check = var.need_check_feed
        self.lod = var.lod_level > 0 or bool(fed_lod)
        self.device = device
        self.index_bound = index_bound if device != "cpu" else None   # (the CPU kernels' own checks name it)

    def convert(self, value):
        lod = None
        if isinstance(value, LoDTensor):
            t, lod = value._holder.value, value._holder.lod
            if t is None:
                raise ValueError("feed '%s': the LoDTensor holds no data" % self.name)
            shape = t.shape
            if t.dtype != self.torch_dtype:
                t = self._cast_tensor(t)
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
                arr = self._cast_array(arr)
            if not arr.flags.c_contiguous or not arr.flags.writeable:
                arr = np.array(arr, copy=True, order="C")
            t, shape = torch.from_numpy(arr), arr.shape
        if self.check:
            want = self.shape
            # a LoD feed's rows are not its batch: Paddle 1.8.5 checks its rank and the dims after the first
            if len(shape) != len(want) or any(w >= 0 and w != g for w, g in zip(want[1:] if lod else want,
                                                                                 shape[1:] if lod else shape)):
                raise ValueError("The fed Variable %r should have dimensions = %r, shape = %r, but received fed "
                                 "shape %r on each device" % (self.name, len(want), want, list(shape)))
        if self.device != "cpu" and t.device.type == "cpu":
            if self.index_bound is not None and t.numel():
                bound, error = self.index_bound
                lo, hi = torch.aminmax(t)
                if int(lo) < 0 or int(hi) >= bound:
                    raise error(t)
                t = mark_checked(t.to(self.device), bound)   # (the kernel need not check again)
            else:
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


    # A value of another dtype: fluid.data (need_check_feed) refuses it in Paddle 1.8.5's words. Paddle feeds
    # any dtype to a layers.data variable, which then holds a tensor of a dtype it does not declare (its ops run
    # in that dtype until one meets a parameter: "Tensor holds the wrong type"). Here such a value is cast to
    # the declared dtype when that changes no value (int32 ids to int64) or only rounds a float to another
    # float (float64 to float32: the declared precision); any other cast (0.5 to an integer) is refused.
    def _wrong_dtype(self, got):
        if self.check:
            return ValueError("The data type of fed Variable %r must be %r, but received %r"
                              % (self.name, self.np_dtype.name, got))
        return ValueError("feed '%s': expected dtype %s, got %s (cast it with .astype('%s'); a cast that changes "
                          "no value, or rounds a float to a float, is done here)"
                          % (self.name, self.np_dtype.name, got, self.np_dtype.name))

    def _cast_array(self, arr):
        if self.check:
            raise self._wrong_dtype(arr.dtype.name)
        with np.errstate(all="ignore"):
            cast = arr.astype(self.np_dtype)
            ok = (arr.dtype.kind == "f" and self.np_dtype.kind == "f") or np.array_equal(cast.astype(arr.dtype), arr)
        if not ok:
            raise self._wrong_dtype(arr.dtype.name)
        return cast

    def _cast_tensor(self, t):
        if self.check:
            raise self._wrong_dtype(str(t.dtype)[6:])
        cast = t.to(self.torch_dtype)
        if not ((t.is_floating_point() and cast.is_floating_point()) or torch.equal(cast.to(t.dtype), t)):
            raise self._wrong_dtype(str(t.dtype)[6:])
        return cast


class PreparedRun:
    """A lowered block with its feed specs: run(feed, return_numpy) -> the fetched values as Executor.run
    returns them (numpy arrays, or LoDTensors / SelectedRows with return_numpy=False)."""

    def __init__(self, lowered, feed_specs, persist_feeds=(), feed_holders=()):
        self.lowered = lowered
        self.feed_specs = feed_specs
        self.fetch_persistable = lowered.fetch_persistable
        # Paddle's feed op writes each fed value into the scope, where a later run of a program that does not
        # feed it reads it. [(index in feed_specs, ScopeVar)]: persistable variables (a learning rate) are
        # copied into their tensor (the optimizer ops of a data-parallel step read them there), the others
        # (feed_holders) just hold the fed tensor
        self.persist_feeds = tuple(persist_feeds)
        self.feed_holders = tuple(feed_holders)

    def run(self, feed, return_numpy):
        feeds = [spec.convert(feed[spec.name]) for spec in self.feed_specs]
        if self.persist_feeds:
            for i, holder in self.persist_feeds:
                _store(holder, feeds[i])
        for i, holder in self.feed_holders:
            v = feeds[i]
            holder.value, holder.lod = v if isinstance(v, tuple) else (v, None)
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


def _store(holder, value):
    """Write a fed value into its scope variable: in place when the held tensor has its shape and dtype (a
    lowering may hold that tensor), else as a copy."""
    t, lod = value if isinstance(value, tuple) else (value, None)
    old = holder.value
    if (isinstance(old, torch.Tensor) and old.shape == t.shape and old.dtype == t.dtype
            and old.device == t.device):
        old.copy_(t)
    else:
        holder.value = t.clone()
    holder.lod = lod
