"""Runtime data holders, named as in Paddle's `fluid.core`: places, Scope, LoDTensor, SelectedRows.

Values are torch tensors; torch is imported only when a tensor is made or read, so building programs
never loads it.
"""

import itertools
import threading

import numpy as np

from .dtypes import VarType, convert_dtype, dtype_name  # noqa: F401
from .desc import AttrType, BlockDesc, OpDesc, ProgramDesc, VarDesc  # noqa: F401  (Paddle's desc classes)
from .framework_misc import core_globals
from .tensor_dims import TensorDims
from .core_objects import ScopePool, ScopeVarAccessors, unittest_throw_exception
from ..ops.enforce import EnforceNotMet  # noqa: F401  (Paddle's core.EnforceNotMet)


# ---------------------------------------------------------------------------------------------------
# Places
class Place:
    """Paddle's core.Place: the base of the places, and a generic one that set_place points at another."""

    def set_place(self, place):
        self._inner = place._inner if type(place) is Place else place

    def _torch_device(self):
        inner = getattr(self, "_inner", None)
        if inner is None:
            raise RuntimeError("core.Place() names no place yet: call set_place(fluid.CPUPlace()) first")
        return inner._torch_device()

    def _equals(self, other):
        a, b = getattr(self, "_inner", self), getattr(other, "_inner", other)
        return a == b

    def _type(self):
        """Paddle's variant index of the place: 0 CUDAPlace, 1 CPUPlace, 2 CUDAPinnedPlace."""
        p = getattr(self, "_inner", self)
        return 2 if isinstance(p, CUDAPinnedPlace) else 1 if isinstance(p, CPUPlace) else 0


class CPUPlace(Place):
    def _torch_device(self):
        return "cpu"

    def __eq__(self, other):
        return isinstance(other, CPUPlace)

    def __hash__(self):
        return hash("cpu")

    def __repr__(self):
        return "CPUPlace"


class CUDAPlace(Place):
    def __init__(self, dev_id=0):
        if not isinstance(dev_id, int) or dev_id < 0:
            raise ValueError("CUDAPlace device id must be a non-negative int, got %r" % (dev_id,))
        self.dev_id = dev_id

    def get_device_id(self):
        return self.dev_id

    def _torch_device(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("CUDAPlace(%d) was requested but torch sees no CUDA device "
                               "(use fluid.CPUPlace() on this machine)" % self.dev_id)
        # Paddle 1.8 computed float32 convolutions and matmuls in full float32 (its CUDA 10 builds had no
        # TF32); torch lets cuDNN use TF32 by default, which moves losses by ~1e-3. Paddle's numbers first.
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        return "cuda:%d" % self.dev_id

    def __eq__(self, other):
        return isinstance(other, CUDAPlace) and other.dev_id == self.dev_id

    def __hash__(self):
        return hash(("cuda", self.dev_id))

    def __repr__(self):
        return "CUDAPlace(%d)" % self.dev_id


class CUDAPinnedPlace(CPUPlace):
    def __repr__(self):
        return "CUDAPinnedPlace"


def is_compiled_with_cuda():
    import torch
    return torch.cuda.is_available()


def get_cuda_device_count():
    import torch
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _set_eager_deletion_mode(threshold, fraction, fast):
    """Paddle's garbage-collection tuning (FLAGS_eager_delete_tensor_gb and friends): a no-op here, where
    torch frees a tensor as soon as the generated code drops its last reference."""
    for name, v in (("threshold", threshold), ("fraction", fraction)):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise TypeError("_set_eager_deletion_mode: %s must be a number, got %r" % (name, v))


def torch_device(place):
    if place is None:
        return "cpu"
    if isinstance(place, Place):
        return place._torch_device()
    raise TypeError("place must be fluid.CPUPlace() or fluid.CUDAPlace(i), got %r" % (place,))


# ---------------------------------------------------------------------------------------------------
# Tensors
def to_torch(value, device="cpu", dtype=None):
    """numpy array / list / scalar / torch tensor / LoDTensor -> torch tensor on `device`."""
    import torch
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
        import torch as _t
        want = getattr(_t, dtype_name(dtype))
        if t.dtype != want:
            t = t.to(want)
    if str(t.device) != device and not (device == "cpu" and t.device.type == "cpu"):
        t = t.to(device)
    return t


class ScopeVar(ScopeVarAccessors):
    """One variable slot of a Scope (Paddle's core Variable): a tensor value plus its LoD."""

    __slots__ = ("name", "value", "lod")

    def __init__(self, name=None, value=None, lod=None):
        self.name = name
        self.value = value
        self.lod = lod

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

    def __repr__(self):
        return "<ScopeVar %s: %s>" % (self.name, type(self.value).__name__)


def _lod_level_list(level):
    """One LoD level (list, numpy array or torch tensor of offsets) -> list of python ints."""
    if hasattr(level, "tolist"):
        return [int(x) for x in level.tolist()]
    return [int(x) for x in level]


def lod_as_lists(lod):
    """A LoD as Paddle shows it: a list of levels, each a list of int offsets ([] when there is none)."""
    return [_lod_level_list(level) for level in (lod or ())]


def lod_as_tensors(lod, device="cpu"):
    """A LoD as the generated code carries it: a tuple of int64 torch tensors of offsets on `device`
    (None when there is no LoD). Kernels index with them directly, so they live where the data lives."""
    if not lod:
        return None
    import torch
    out = []
    for level in lod:
        if isinstance(level, torch.Tensor):
            t = level if level.dtype == torch.int64 else level.to(torch.int64)
        else:
            t = torch.as_tensor(np.asarray(level, dtype=np.int64))
        if device != "cpu" or t.device.type != "cpu":
            if t.device != torch.device(device):
                t = t.to(device)
        out.append(t)
    return tuple(out)


def check_lod(lod, height=None):
    """Paddle's CheckLoD: each level starts at 0, never decreases, ends where the next level (or the
    tensor's rows) ends. Returns an error string, or None when the LoD is valid."""
    for i, level in enumerate(lod):
        if len(level) < 2:
            return "LoD level %d needs at least 2 offsets, got %s" % (i, level)
        if level[0] != 0:
            return "LoD level %d must start at 0, got %s" % (i, level)
        if any(b < a for a, b in zip(level, level[1:])):
            return "LoD level %d must be non-decreasing, got %s" % (i, level)
        if i + 1 < len(lod):
            if level[-1] != len(lod[i + 1]) - 1:
                return ("LoD level %d ends at %d but level %d holds %d sequences"
                        % (i, level[-1], i + 1, len(lod[i + 1]) - 1))
        elif height is not None and level[-1] != height:
            return "the last LoD level ends at %d but the tensor has %d rows" % (level[-1], height)
    return None


def lengths_to_offsets(lengths):
    """Sequence lengths -> int64 offsets [0, l0, l0+l1, ...] (numpy)."""
    lens = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if lens.size and lens.min() < 0:
        raise ValueError("sequence lengths must be >= 0, got %s" % (list(lengths),))
    offs = np.empty(lens.size + 1, dtype=np.int64)
    offs[0] = 0
    np.cumsum(lens, out=offs[1:])
    return offs


class EOFException(Exception):
    """Raised by Executor.run when a non-iterable DataLoader / PyReader has no more batches
    (Paddle's fluid.core.EOFException); call loader.reset() and start() again for the next pass."""


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
        import torch
        if isinstance(array, torch.Tensor):
            t = array.detach().clone()
        else:
            arr = np.array(array, copy=True)
            if arr.dtype == np.float64 and not isinstance(array, np.ndarray):
                arr = arr.astype(np.float32)
            if arr.dtype == object:
                raise TypeError("LoDTensor.set: cannot make a tensor of ragged or mixed data; flatten the "
                                "sequences and give their lengths with set_recursive_sequence_lengths")
            t = torch.from_numpy(np.ascontiguousarray(arr))
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
        if dtype is not None:
            return a.astype(dtype)
        # np.array(t) (copy=True) is a snapshot, as in Paddle: a view would change under the next
        # in-place optimizer update of a parameter; np.asarray(t) may share memory
        return a.copy() if copy else a

    def shape(self):
        t = self._holder.value
        return [] if t is None else list(t.shape)

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
        from .tensor_text import tensor_text
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
        import torch
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


class Scope(ScopePool):
    """name -> ScopeVar, with parent/child scopes as in Paddle."""

    _count = itertools.count()

    def __init__(self, parent=None):
        # a process-unique id: the executor caches lowerings per scope, and id() of a freed scope is reused
        self._uid = next(Scope._count)
        self._vars = {}
        self._parent = parent
        self._kids = []
        self._lock = threading.Lock()

    def var(self, name):
        v = self._vars.get(name)
        if v is None:
            with self._lock:
                v = self._vars.get(name)
                if v is None:
                    v = self._vars[name] = ScopeVar(name)
        return v

    def find_var(self, name):
        s = self
        while s is not None:
            v = s._vars.get(name)
            if v is not None:
                return v
            s = s._parent
        return None

    def find_local_var(self, name):
        return self._vars.get(name)

    def erase(self, names):
        for n in names:
            self._vars.pop(n, None)

    def local_var_names(self):
        return list(self._vars.keys())

    def new_scope(self):
        kid = Scope(self)
        self._kids.append(kid)
        return kid

    def drop_kids(self):
        self._kids = []

    def parent(self):
        return self._parent


_global_scope = Scope()


def global_scope():
    return _global_scope


def _switch_scope(scope):
    global _global_scope
    old = _global_scope
    _global_scope = scope
    return old


class op_proto_and_checker_maker:   # noqa: N801  (Paddle's name)
    """The op attribute names and role bits Paddle's scripts read from fluid.core (hand-built RPC and
    transpiler programs set op_role by hand)."""
    from ..ops.roles import OpRole

    @staticmethod
    def kOpRoleAttrName():   # noqa: N802
        return "op_role"

    @staticmethod
    def kOpRoleVarAttrName():   # noqa: N802
        return "op_role_var"

    @staticmethod
    def kOpNameScopeAttrName():   # noqa: N802
        return "op_namescope"

    @staticmethod
    def kOpCreationCallstackAttrName():   # noqa: N802
        return "op_callstack"

    @staticmethod
    def kOpDeviceAttrName():   # noqa: N802
        return "op_device"


def globals():   # noqa: A001  (Paddle's name)
    return core_globals()


# Paddle's inference API lives in fluid.core too (fluid.core.AnalysisConfig, create_paddle_predictor, ...)
from .inference import (AnalysisConfig, AnalysisPredictor, NativeConfig, NativePaddlePredictor,  # noqa: E402,F401
                        PaddleBuf, PaddleDType, PaddlePlace, PaddlePredictor, PaddleTensor, ZeroCopyTensor,
                        create_paddle_predictor)
from .core_registry import (_get_all_register_op_kernels, get_grad_op_desc, has_grad_op_maker,  # noqa: E402,F401
                            has_infer_inplace, is_float16_supported, op_support_gpu)
__unittest_throw_exception__ = unittest_throw_exception
from .core_objects import get_fetch_variable, set_feed_variable  # noqa: E402,F401
from .core_objects import set_fuse_parameter_group_size as _set_fuse_parameter_group_size  # noqa: E402,F401
from .core_objects import set_fuse_parameter_memory_size as _set_fuse_parameter_memory_size  # noqa: E402,F401
