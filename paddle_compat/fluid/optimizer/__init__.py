"""Paddle's fluid.optimizer: the Optimizer base (base.py: minimize = backward + clip + regularize + update ops),
the per-parameter optimizers (per_parameter.py: SGD ... Lamb; their kernels, one no-autograd wrapper and one
Hogwild policy for all: backends/lowering/kernels/optimizer_ops.py) and the wrappers (wrappers.py: parameter
averaging, Lookahead, Recompute)."""

from . import per_parameter, wrappers
from .base import Optimizer  # noqa: F401
from .per_parameter import *  # noqa: F401,F403
from .wrappers import *  # noqa: F401,F403

__all__ = per_parameter.__all__ + wrappers.__all__ + ["Optimizer"]
