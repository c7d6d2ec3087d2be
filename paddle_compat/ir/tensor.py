"""Runtime data holders, named as in Paddle's `fluid.core`: ScopeVar (a scope's variable slot), LoDTensor,
LoDTensorArray, SelectedRows.

Values are torch tensors; torch is loaded only when a tensor is made or read (a lazy module), so building
programs never loads it.
"""

import sys

import numpy as np

from .dtypes import convert_dtype, dtype_name
from .lazy import torch
from .lod import check_lod, lengths_to_offsets, lod_as_lists, lod_as_tensors
from .places import CPUPlace, CUDAPlace, torch_device
from .tensor_dims import TensorDims
from .tensor_text import tensor_text

__all__ = ["ScopeVar", "LoDTensor", "LoDTensorArray", "SelectedRows", "to_torch"]


def to_torch(value, device="cpu", dtype=None):
    """numpy array / list / scalar / torch tensor / LoDTensor -> torch tensor on `device`."""
    if isinstance(value, LoDTensor):
        value = value._holder.value
    if isinstance(value, torch.Tensor):
        t = value
    else:
        arr = np.asarray(value)
        if dtype is not None:
            arr = arr.astype(dtype_name(dtype), copy=False)
        if not arr.flags.writeable or not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr).copy()
        t = torch.from_numpy(arr)
    if dtype is not None:
        want = getattr(torch, dtype_name(dtype))
        if t.dtype != want:
            t = t.to(want)
    if str(t.device) != device and not (device == "cpu" and t.device.type == "cpu"):
        t = t.to(device)
    return t


class _Pending:
    """A value set from numpy before torch was loaded (LoDTensor.set on the CPU): made a torch tensor on first
    read. Why: setting a value must not load torch (seconds on a busy machine). Paddle's tests fill a server's
    table in a forked process before its exe.run announces the port, and wait only 5 s for the announcement
    (test_nce_remote_table_op, test_lookup_remote_table_op, test_recv_save_op); loading torch there made
    them miss it."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def tensor(self):
        return torch.from_numpy(self.array)


class ScopeVar:
    """One variable slot of a Scope (Paddle's core Variable): a tensor value plus its LoD."""

    __slots__ = ("name", "_value", "lod")

    def __init__(self, name=None, value=None, lod=None):
        self.name = name
        self._value = value
        self.lod = lod

    @property
    def value(self):
        v = self._value
        if v.__class__ is _Pending:
            v = self._value = v.tensor()
        return v

    @value.setter
    def value(self, v):
        self._value = v

    def get_tensor(self):
        return LoDTensor(_holder=self)

    def get_selected_rows(self):
        if getattr(self.value, "is_sparse", False):   # a row-sparse gradient held as torch COO
            return SelectedRows._from_torch(self.value)
        if not isinstance(self.value, SelectedRows):
            self.value = SelectedRows()
        return self.value

    def is_initialized(self):
        return self.value is not None

    def set_int(self, v):
        self.value = v

    def get_int(self):
        return int(self.value)

    # typed accessors Paddle's own unit tests use
    def is_int(self):
        return isinstance(self.value, int) and not isinstance(self.value, bool)

    def is_float(self):
        return isinstance(self.value, float)

    def set_float(self, v):
        self.value = float(v)

    def get_float(self):
        return float(self.value)

    def get_lod_tensor_array(self):
        if not isinstance(self.value, LoDTensorArray):
            # a run leaves a list of tensors, their LoDs beside them (`lods`): shown as LoDTensors
            lods = list(getattr(self.value, "lods", None) or [])
            items = [v if v is None or isinstance(v, LoDTensor) else
                     LoDTensor(_holder=ScopeVar(value=v, lod=lods[i] if i < len(lods) else None))
                     for i, v in enumerate(self.value or [])]
            self.value = LoDTensorArray(items)
        return self.value

    def get_lod_rank_table(self):
        """The rank table lod_rank_table left here (its items(): (index, length), longest first)."""
        if self.value is None or not hasattr(self.value, "items"):
            raise RuntimeError("variable %s holds no LoDRankTable" % self.name)
        return self.value

    def get_fetch_list(self):
        """The list a fetch variable holds (Paddle's FetchList): fetched tensors, by column."""
        if not isinstance(self.value, list):
            self.value = []
        return self.value

    def is_type(self, name):
        """The holder's kind by Paddle's type names (LoDTensor, SelectedRows, LoDTensorArray)."""
        kinds = {"LoDTensorArray": LoDTensorArray, "SelectedRows": SelectedRows}
        return isinstance(self.value, kinds[name]) if name in kinds else name == "LoDTensor"

    def __repr__(self):
        return "<ScopeVar %s: %s>" % (self.name, type(self.value).__name__)



def _set_array(array):
    """LoDTensor.set's copy of a numpy array / list / scalar: contiguous, float64 lists as float32."""
    arr = np.array(array, copy=True)
    if arr.dtype == np.float64 and not isinstance(array, np.ndarray):
        arr = arr.astype(np.float32)
    if arr.dtype == object:
        raise TypeError("LoDTensor.set: cannot make a tensor of ragged or mixed data; flatten the "
                        "sequences and give their lengths with set_recursive_sequence_lengths")
    return np.ascontiguousarray(arr)


class LoDTensor(TensorDims):
    """A tensor with level-of-detail (sequence offset) info. `np.array(t)` reads it, `t.set(a, place)` writes it.

    The LoD is kept as offsets (Paddle's form): [[0, 2, 5]] means rows 0-1 and 2-4 are two sequences.
    """

    def __init__(self, recursive_sequence_lengths=None, _holder=None):
        if isinstance(recursive_sequence_lengths, ScopeVar):     # LoDTensor(holder): a view of a scope slot
            recursive_sequence_lengths, _holder = None, recursive_sequence_lengths
        self._holder = _holder if _holder is not None else ScopeVar()
        if recursive_sequence_lengths is not None:     # Paddle's LoDTensor(lengths): the LoD before the data
            self.set_recursive_sequence_lengths(recursive_sequence_lengths)

    # data ------------------------------------------------------------------------------------------
    def set(self, array, place=None):
        device = torch_device(place) if place is not None else None
        if "torch" not in sys.modules and device in (None, "cpu"):
            # torch not loaded yet (so `array` is no torch tensor, and the old value none either): the array
            # is kept and made a tensor when first read (_Pending says why)
            self._holder.value = _Pending(_set_array(array))
            return
        if isinstance(array, torch.Tensor):
            t = array.detach().clone()
        else:
            t = torch.from_numpy(_set_array(array))
        old = self._holder.value
        if device is None and isinstance(old, torch.Tensor) and not old.is_sparse:
            device = str(old.device)       # no place given: stay where the variable lives (a GPU run's scope)
        if device is not None and device != "cpu":
            t = t.to(device)
        if isinstance(old, torch.Tensor) and old.requires_grad:
            t.requires_grad_(True)
        self._holder.value = t

    def _torch(self):
        return self._holder.value

    def __array__(self, dtype=None, copy=None):
        t = self._holder.value
        if t is None:
            raise RuntimeError("tensor %r is not initialized" % (self._holder.name or "",))
        a = t.detach().cpu().numpy()
        if not a.flags.c_contiguous:    # a channels-last activation (FLAGS_conv_channels_last): in C order
            a = np.ascontiguousarray(a)
        if dtype is not None:
            return a.astype(dtype)
        # np.array(t) (copy=True) is a snapshot, as in Paddle: a view would change under the next
        # in-place optimizer update of a parameter; np.asarray(t) may share memory
        return a.copy() if copy else a

    def shape(self):
        t = self._holder.value
        return [] if t is None else list(t.shape)

    def _place(self):
        """Where the data lives (Paddle's LoDTensor._place()): CPUPlace, or CUDAPlace(index)."""
        t = self._holder.value
        if t is None or t.device.type == "cpu":
            return CPUPlace()
        return CUDAPlace(t.device.index or 0)

    def _dtype(self):
        t = self._holder.value
        return convert_dtype(str(t.dtype).replace("torch.", ""))

    def _is_initialized(self):
        return self._holder.value is not None

    def __len__(self):
        return self.shape()[0] if self.shape() else 0

    # LoD -------------------------------------------------------------------------------------------
    def lod(self):
        return lod_as_lists(self._holder.lod)

    def set_lod(self, lod):
        lod = lod_as_lists(lod)
        shape = self.shape()
        err = check_lod(lod, shape[0] if shape else None)
        if err:
            raise ValueError("LoDTensor.set_lod: " + err)
        self._holder.lod = lod_as_tensors(lod)

    def recursive_sequence_lengths(self):
        return [[b - a for a, b in zip(level, level[1:])] for level in self.lod()]

    def set_recursive_sequence_lengths(self, lengths):
        if not isinstance(lengths, (list, tuple)) or any(not hasattr(level, "__len__") for level in lengths):
            raise TypeError("set_recursive_sequence_lengths expects a list of levels, each a list of "
                            "sequence lengths, e.g. [[2, 3]]; got %r" % (lengths,))
        lod = [lengths_to_offsets(level) for level in lengths]
        for i in range(len(lod) - 1):
            if lod[i][-1] != len(lod[i + 1]) - 1:
                raise ValueError("LoDTensor.set_recursive_sequence_lengths: level %d covers %d sequences but "
                                 "level %d has %d" % (i, lod[i][-1], i + 1, len(lod[i + 1]) - 1))
        # kept as torch offsets: that is what a run consumes, so feeding converts nothing
        self._holder.lod = lod_as_tensors(lod)

    def has_valid_recursive_sequence_lengths(self):
        lod = self.lod()
        if not lod:
            return True
        shape = self.shape()
        return check_lod(lod, shape[0] if shape else 0) is None

    def __repr__(self):
        return "LoDTensor(shape=%s, lod=%s)" % (self.shape(), self.lod())

    def __str__(self):
        # Paddle 1.8's text: lod, dim, layout, dtype and every value (what print(tensor) shows there)
        if self._holder.value is None:
            return repr(self)
        return tensor_text(np.asarray(self), self.lod())


class LoDTensorArray(list):
    """Paddle's core.LoDTensorArray: a list of LoDTensors (append takes a LoDTensor or an array)."""

    def append(self, tensor):
        if not isinstance(tensor, LoDTensor):
            t = LoDTensor()
            t.set(tensor, CPUPlace())
            tensor = t
        super().append(tensor)

    def _move_to_list(self):
        return list(self)


class SelectedRows:
    """Row-sparse tensor (Paddle's SelectedRows): `rows()` index into a [height, ...] dense tensor and
    `get_tensor()` holds those rows, one per entry of rows(); a row may repeat (values add up).

    Inside generated code a row-sparse gradient is a torch sparse COO tensor (what autograd gives for
    embedding(is_sparse=True)); this class is how it is shown to users (fetch with return_numpy=False).
    """

    def __init__(self, rows=None, height=0, value=None):
        self._rows = [int(r) for r in rows] if rows is not None else []
        self._height = int(height)
        # the holder get_tensor() views: `srows.get_tensor().set(array, place)` sets the rows' values (not
        # named _holder: that marks a LoDTensor where code tells the two apart)
        self._values_holder = ScopeVar(value=value)

    @property
    def _value(self):
        return self._values_holder.value

    @_value.setter
    def _value(self, value):
        self._values_holder.value = value

    @classmethod
    def _from_torch(cls, t):
        """A torch sparse COO tensor (rows in indices[0], uncoalesced) -> SelectedRows sharing its values."""
        rows = t._indices()[0].tolist()
        return cls(rows, t.shape[0], t._values().detach())

    def _to_torch(self, device="cpu"):
        """The torch sparse COO form generated code works on (an op reading a SelectedRows a test put in
        the scope by hand)."""
        vals = to_torch(self._value, device)
        idx = torch.as_tensor(self._rows, dtype=torch.int64, device=vals.device).reshape(1, -1)
        return torch.sparse_coo_tensor(idx, vals, (self._height,) + tuple(vals.shape[1:]))

    def sync_index(self):
        """Paddle rebuilds its row -> position map here; rows are looked up from the list itself here."""

    def rows(self):
        return list(self._rows)

    def set_rows(self, rows):
        self._rows = [int(r) for r in rows]

    def height(self):
        return self._height

    def set_height(self, h):
        self._height = int(h)

    def get_tensor(self):
        return LoDTensor(_holder=self._values_holder)

    def numel(self):
        v = self._value
        return 0 if v is None else int(v.numel())

    def to_dense(self):
        """The dense [height, ...] array these rows stand for (repeated rows added up)."""
        vals = np.array(self.get_tensor())
        out = np.zeros((self._height,) + vals.shape[1:], dtype=vals.dtype)
        np.add.at(out, np.asarray(self._rows, dtype=np.int64), vals)
        return out

    def __repr__(self):
        return "SelectedRows(height=%d, %d rows)" % (self._height, len(self._rows))
