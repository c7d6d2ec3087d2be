"""Places (where a program runs: fluid.CPUPlace(), fluid.CUDAPlace(i)) and the place lists Paddle derives from
the environment (CPU_NUM, FLAGS_selected_gpus). torch is loaded only when a place is turned into a device."""

import os

from .lazy import torch

__all__ = ["Place", "CPUPlace", "CUDAPlace", "CUDAPinnedPlace", "is_compiled_with_cuda", "get_cuda_device_count",
           "torch_device", "cpu_places", "cuda_places", "cuda_pinned_places", "capturing"]


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


def capturing(device):
    """Whether work on this torch device is being recorded into a CUDA graph now: a kernel may not read a value
    back then (a replay runs no Python at all)."""
    return device.type == "cuda" and torch.cuda.is_current_stream_capturing()


def is_compiled_with_cuda():
    return torch.cuda.is_available()


def get_cuda_device_count():
    return torch.cuda.device_count() if torch.cuda.is_available() else 0



def torch_device(place):
    if place is None:
        return "cpu"
    if isinstance(place, Place):
        return place._torch_device()
    raise TypeError("place must be fluid.CPUPlace() or fluid.CUDAPlace(i), got %r" % (place,))



def _current_expected_place():
    return CPUPlace()


def cpu_places(device_count=None):
    if device_count is None:
        device_count = int(os.environ.get("CPU_NUM", "1"))
    return [CPUPlace() for _ in range(device_count)]


def cuda_places(device_ids=None):
    """Paddle's rule: device_ids=None means FLAGS_selected_gpus (set per process by the launcher), else all."""
    if device_ids is None:
        sel = os.environ.get("FLAGS_selected_gpus", "").strip()
        if sel:
            try:
                device_ids = [int(s) for s in sel.split(",") if s.strip()]
            except ValueError:
                raise ValueError("FLAGS_selected_gpus must be a comma-separated list of GPU ids, got %r" % sel)
        else:
            device_ids = range(get_cuda_device_count())
    return [CUDAPlace(i) for i in device_ids]


def cuda_pinned_places(device_count=None):
    """device_count CUDAPinnedPlaces (default: CPU_NUM, as Paddle)."""
    if device_count is None:
        device_count = int(os.environ.get("CPU_NUM", "1"))
    return [CUDAPinnedPlace() for _ in range(device_count)]
