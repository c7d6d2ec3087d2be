"""Paddle's FLAGS_*: the table fluid.set_flags / get_flags / core.globals() read and write, and how the runtime
reads a flag's value (from the environment, where Paddle also took FLAGS_* from)."""

import os

__all__ = ["set_flags", "get_flags", "core_globals", "flag_value"]

# Public FLAGS_* of Paddle 1.8 that scripts set, with Paddle's defaults. They are recorded and returned by
# get_flags; the memory and kernel ones change nothing here (torch's business). The runtime reads those it
# honours from the environment (FLAGS_check_nan_inf: backends/lowering/nan_check.py; FLAGS_rpc_*, ...).
_FLAGS = {
    "FLAGS_eager_delete_tensor_gb": 0.0, "FLAGS_fraction_of_gpu_memory_to_use": 0.92,
    "FLAGS_allocator_strategy": "auto_growth", "FLAGS_cudnn_deterministic": False,
    "FLAGS_cudnn_exhaustive_search": False, "FLAGS_conv_workspace_size_limit": 512, "FLAGS_check_nan_inf": False,
    "FLAGS_benchmark": False, "FLAGS_paddle_num_threads": 1,
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
    # not Paddle's: on the CPU, conv2d reads its input in channels-last memory order where torch's oneDNN
    # convolutions run faster that way (a ResNet-20 step: 0.82x the time; docs/internals.md); the values and
    # every shape stay NCHW, and what leaves a run (fetches, the scope as numpy) is in C order. 0 turns it off
    "FLAGS_conv_channels_last": True,
}


# flags Paddle's core.globals() also holds that scripts (and Paddle's op tests) read and write there
# (the fuse_parameter flags group gradients for a fused allreduce in Paddle; recorded only: gradients here are
# reduced per bucket by torch, whatever they say)
# (FLAGS_use_mkldnn is private in Paddle 1.8.5: get_flags / set_flags refuse it, core.globals() has it)
_CORE_ONLY_FLAGS = {"FLAGS_use_system_allocator": False, "FLAGS_use_mkldnn": False,
                    "FLAGS_fuse_parameter_groups_size": 1, "FLAGS_fuse_parameter_memory_size": -1.0}


def core_globals():
    """fluid.core.globals(): the flags by name, readable and writable (one dict with set_flags/get_flags)."""
    for k, v in _CORE_ONLY_FLAGS.items():
        _FLAGS.setdefault(k, v)
    return _FLAGS


def set_flags(flags):
    if not isinstance(flags, dict):
        raise TypeError("set_flags: flags must be a dict, got %s" % type(flags).__name__)
    for key, value in flags.items():
        if key not in _FLAGS or key in _CORE_ONLY_FLAGS:    # (core.globals() adds those to _FLAGS)
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
        if key not in _FLAGS or key in _CORE_ONLY_FLAGS:
            raise ValueError("Flag %s cannot get its value through this function" % key)
        out[key] = flag_value(key)
    return out


def flag_value(key):
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


def _set_eager_deletion_mode(threshold, fraction, fast):
    """Paddle's garbage-collection tuning (FLAGS_eager_delete_tensor_gb and friends): a no-op here, where
    torch frees a tensor as soon as the generated code drops its last reference."""
    for name, v in (("threshold", threshold), ("fraction", fraction)):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise TypeError("_set_eager_deletion_mode: %s must be a number, got %r" % (name, v))
