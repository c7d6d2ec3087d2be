"""Transpilers: pure passes Program -> Program(s) that insert Paddle's distributed op types."""

import warnings

from .config import DistributeTranspilerConfig  # noqa: F401
from .distribute_transpiler import DistributeTranspiler  # noqa: F401
from .ps_dispatcher import HashName, PSDispatcher, RoundRobin  # noqa: F401

__all__ = ["DistributeTranspiler", "DistributeTranspilerConfig", "RoundRobin", "HashName", "PSDispatcher",
           "memory_optimize", "release_memory"]


def memory_optimize(input_program, skip_opt_set=None, print_log=False, level=0, skip_grads=True):
    """No-op: torch frees intermediates itself. Paddle deprecated this pass too."""
    warnings.warn("memory_optimize is a no-op in paddle_compat (torch manages memory)", stacklevel=2)


def release_memory(input_program, skip_opt_set=None):
    """No-op, as memory_optimize."""
    warnings.warn("release_memory is a no-op in paddle_compat (torch manages memory)", stacklevel=2)
