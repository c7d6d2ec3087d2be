"""Runtime data holders, named as in Paddle's `fluid.core`: places, Scope, LoDTensor, SelectedRows.

Values are torch tensors; torch is imported only when a tensor is made or read, so building programs
never loads it.
"""

import threading

import numpy as np

from .dtypes import VarDesc, VarType, convert_dtype, dtype_name  # noqa: F401  (fluid.core.VarDesc)


# ---------------------------------------------------------------------------------------------------
# Places
class Place:
    def _torch_device(self):
        raise NotImplementedError


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


class ScopeVar:
    """One variable slot of a Scope (Paddle's core Variable): a tensor value plus its LoD."""

    __slots__ = ("name", "value", "lod")

    def __init__(self, name=None, value=None, lod=None):
        self.name = name
        self.value = value
        self.lod = lod

    def get_tensor(self):
        return LoDTensor(_holder=self)

    def get_selected_rows(self):
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


class LoDTensor:
    """A tensor with level-of-detail (sequence offset) info. `np.array(t)` reads it, `t.set(a, place)` writes it."""

    def __init__(self, _holder=None):
        self._holder = _holder if _holder is not None else ScopeVar()

    # data ------------------------------------------------------------------------------------------
    def set(self, array, place=None):
        device = torch_device(place) if place is not None else None
        arr = np.array(array, copy=True)
        if arr.dtype == np.float64 and not isinstance(array, np.ndarray):
            arr = arr.astype(np.float32)
        import torch
        t = torch.from_numpy(np.ascontiguousarray(arr))
        if device is not None and device != "cpu":
            t = t.to(device)
        old = self._holder.value
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
        return a.astype(dtype) if dtype is not None else a

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
        return [list(level) for level in (self._holder.lod or [])]

    def set_lod(self, lod):
        lod = [list(map(int, level)) for level in lod]
        for i, level in enumerate(lod):
            if not level or level[0] != 0 or any(b < a for a, b in zip(level, level[1:])):
                raise ValueError("LoD level %d must start at 0 and be non-decreasing, got %s" % (i, level))
        self._holder.lod = lod

    def recursive_sequence_lengths(self):
        return [[b - a for a, b in zip(level, level[1:])] for level in (self._holder.lod or [])]

    def set_recursive_sequence_lengths(self, lengths):
        lod = []
        for level in lengths:
            offs = [0]
            for n in level:
                if int(n) < 0:
                    raise ValueError("sequence lengths must be >= 0, got %s" % (level,))
                offs.append(offs[-1] + int(n))
            lod.append(offs)
        self._holder.lod = lod

    def has_valid_recursive_sequence_lengths(self):
        lod = self._holder.lod or []
        if not lod:
            return True
        for i, level in enumerate(lod):
            if level[0] != 0:
                return False
            nxt = len(lod[i + 1]) - 1 if i + 1 < len(lod) else (self.shape()[0] if self.shape() else 0)
            if level[-1] != nxt:
                return False
        return True

    def __repr__(self):
        return "LoDTensor(shape=%s, lod=%s)" % (self.shape(), self.lod())


class SelectedRows:
    """Row-sparse tensor: `rows` index into a [height, ...] dense tensor; `value` holds those rows."""

    def __init__(self, rows=None, height=0, value=None):
        self._rows = list(rows) if rows is not None else []
        self._height = height
        self._value = value

    def rows(self):
        return list(self._rows)

    def set_rows(self, rows):
        self._rows = list(rows)

    def height(self):
        return self._height

    def set_height(self, h):
        self._height = int(h)

    def get_tensor(self):
        return LoDTensor(_holder=ScopeVar(value=self._value))


class Scope:
    """name -> ScopeVar, with parent/child scopes as in Paddle."""

    def __init__(self, parent=None):
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
