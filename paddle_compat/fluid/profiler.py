"""fluid.profiler: accepted and ignored (with a warning), so scripts that wrap training in it still run.

Paddle's profiler reports Paddle's own kernels; use torch.profiler to profile the lowered program."""

import contextlib
import warnings

__all__ = ["profiler", "start_profiler", "stop_profiler", "reset_profiler", "cuda_profiler"]


def _warn():
    warnings.warn("fluid.profiler is a no-op in paddle_compat; use torch.profiler instead", stacklevel=3)


def start_profiler(state, tracer_option="Default"):
    if state not in ("CPU", "GPU", "All"):
        raise ValueError("The state must be 'CPU' or 'GPU' or 'All'.")
    _warn()


def stop_profiler(sorted_key=None, profile_path="/tmp/profile"):
    pass


def reset_profiler():
    pass


@contextlib.contextmanager
def profiler(state, sorted_key=None, profile_path="/tmp/profile", tracer_option="Default"):
    start_profiler(state, tracer_option)
    try:
        yield
    finally:
        stop_profiler(sorted_key, profile_path)


@contextlib.contextmanager
def cuda_profiler(output_file, output_mode=None, config=None):
    _warn()
    yield
