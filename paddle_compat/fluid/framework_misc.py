"""Smaller fluid.framework names of Paddle 1.8: cuda_pinned_places, device_guard, set_flags/get_flags,
require_version. Kept apart from framework.py (the IR) because none of them touches a Program."""

import contextlib
import os
import re

from .program import switch_device

__all__ = ["cuda_pinned_places", "device_guard", "set_flags", "get_flags", "require_version"]

# The Fluid API version this package implements (what require_version compares with).
FLUID_API_VERSION = "1.8.5"

# Public FLAGS_* of Paddle 1.8 that scripts set, with Paddle's defaults. They are recorded and returned by
# get_flags; the memory and kernel ones change nothing here (torch's business). The runtime reads those it
# honours from the environment (FLAGS_check_nan_inf: backends/lowering/nan_check.py; FLAGS_rpc_*, ...).
_FLAGS = {
    "FLAGS_eager_delete_tensor_gb": 0.0, "FLAGS_fraction_of_gpu_memory_to_use": 0.92,
    "FLAGS_allocator_strategy": "auto_growth", "FLAGS_cudnn_deterministic": False,
    "FLAGS_cudnn_exhaustive_search": False, "FLAGS_conv_workspace_size_limit": 512, "FLAGS_check_nan_inf": False,
    "FLAGS_benchmark": False, "FLAGS_paddle_num_threads": 1, "FLAGS_use_mkldnn": False,
    "FLAGS_fast_eager_deletion_mode": True, "FLAGS_memory_fraction_of_eager_deletion": 1.0,
    "FLAGS_initial_gpu_memory_in_mb": 0, "FLAGS_reallocate_gpu_memory_in_mb": 0,
    "FLAGS_cpu_deterministic": False, "FLAGS_enable_parallel_graph": False, "FLAGS_sync_nccl_allreduce": True,
    "FLAGS_communicator_max_merge_var_num": 20, "FLAGS_communicator_send_queue_size": 20,
    "FLAGS_communicator_thread_pool_size": 5, "FLAGS_rpc_deadline": 180000, "FLAGS_rpc_retry_times": 3,
    "FLAGS_selected_gpus": "", "FLAGS_max_inplace_grad_add": 0,
    # not Paddle's: run capture-safe steps on a CUDA place as whole-step CUDA graphs
    # (backends/lowering/capture.py). Off until tests/gpu/test_cuda_graphs.py has passed on a real GPU
    # (only a fake graphs backend has exercised it); 1 turns it on
    "FLAGS_cuda_graph_capture": False,
    # not Paddle's: the low precision of contrib.mixed_precision.decorate when its dtype is not given
    # ("float16" as Paddle 1.8, or "bfloat16")
    "FLAGS_amp_dtype": "float16",
}


def cuda_pinned_places(device_count=None):
    """device_count CUDAPinnedPlaces (default: CPU_NUM, as Paddle)."""
    from .core import CUDAPinnedPlace
    if device_count is None:
        device_count = int(os.environ.get("CPU_NUM", "1"))
    return [CUDAPinnedPlace() for _ in range(device_count)]


@contextlib.contextmanager
def device_guard(device=None):
    """Paddle 1.8 pins ops built inside to 'cpu' or 'gpu' (for pipeline training). Here every op of a program
    runs on the executor's place, so the device is checked and otherwise has no effect."""
    if device not in ("cpu", "gpu", "", None):
        raise ValueError("device_guard: device must be 'cpu', 'gpu', '' or None, got %r" % (device,))
    old = switch_device(device)     # recorded as each op's op_device, as Paddle does
    try:
        yield
    finally:
        switch_device(old)


# flags Paddle's core.globals() also holds that scripts (and Paddle's op tests) read and write there
_CORE_ONLY_FLAGS = {"FLAGS_use_system_allocator": False}


def core_globals():
    """fluid.core.globals(): the flags by name, readable and writable (one dict with set_flags/get_flags)."""
    for k, v in _CORE_ONLY_FLAGS.items():
        _FLAGS.setdefault(k, v)
    return _FLAGS


def set_flags(flags):
    if not isinstance(flags, dict):
        raise TypeError("set_flags: flags must be a dict, got %s" % type(flags).__name__)
    for key, value in flags.items():
        if key not in _FLAGS:
            raise ValueError("Flag %s cannot set its value through this function (known: %s)"
                             % (key, ", ".join(sorted(_FLAGS))))
        _FLAGS[key] = value
        # the runtime reads the flags it honours (FLAGS_rpc_deadline, ...) from the environment
        os.environ[key] = str(int(value)) if isinstance(value, bool) else str(value)


def get_flags(flags):
    names = [flags] if isinstance(flags, str) else flags
    if not isinstance(names, (list, tuple)):
        raise TypeError("get_flags: flags must be a str, list or tuple, got %s" % type(flags).__name__)
    out = {}
    for key in names:
        if key not in _FLAGS:
            raise ValueError("Flag %s cannot get its value through this function" % key)
        out[key] = _env_value(key)
    return out


def _env_value(key):
    """A flag's value: the environment's (where Paddle also took FLAGS_* from) parsed as its default's type."""
    default = _FLAGS[key]
    raw = os.environ.get(key)
    if raw is None:
        return default
    try:
        if isinstance(default, bool):
            return raw.strip().lower() in ("1", "true", "yes", "on")
        return type(default)(raw)
    except ValueError:
        return raw


def _version(v, arg):
    if not isinstance(v, str):
        raise TypeError("require_version: %s must be a str, got %s" % (arg, type(v).__name__))
    if not re.match(r"^\d+(\.\d+){0,3}$", v):
        raise ValueError("require_version: %s must look like '1.8.0', got %r" % (arg, v))
    parts = [int(p) for p in v.split(".")]
    return parts + [0] * (4 - len(parts))


def require_version(min_version, max_version=None):
    """Raise unless the Fluid API version implemented here (1.8.5) is in [min_version, max_version]."""
    have = _version(FLUID_API_VERSION, "version")
    lo = _version(min_version, "min_version")
    hi = None if max_version is None else _version(max_version, "max_version")
    if have < lo or (hi is not None and have > hi):
        raise Exception("this script requires Fluid %s%s; paddle_compat implements the Fluid %s API"
                        % (min_version, "" if max_version is None else " to " + max_version, FLUID_API_VERSION))
