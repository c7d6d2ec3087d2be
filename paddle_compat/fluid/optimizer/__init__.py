"""Paddle's fluid.optimizer: the Optimizer base (base.py: minimize = backward + clip + regularize + update ops),
the per-parameter optimizers (per_parameter.py: SGD ... Lamb; their kernels, one no-autograd wrapper and one
Hogwild policy for all: backends/lowering/kernels/optimizer_ops.py) and the wrappers (wrappers.py: parameter
averaging, Lookahead, Recompute)."""

from . import per_parameter, wrappers
# Names Paddle 1.8's fluid/optimizer.py module also holds (scripts and Paddle's tests reach them there)
from .. import framework, layers, unique_name  # noqa: F401
from ..backward import append_backward  # noqa: F401
from ..clip import append_gradient_clip_ops  # noqa: F401
from ..framework import Variable, device_guard, program_guard  # noqa: F401
from ..initializer import Constant  # noqa: F401
from ..layer_helper import LayerHelper  # noqa: F401
from ..regularizer import append_regularization_ops  # noqa: F401
from .base import Optimizer  # noqa: F401
from .per_parameter import *  # noqa: F401,F403
from .wrappers import *  # noqa: F401,F403

__all__ = per_parameter.__all__ + wrappers.__all__ + ["Optimizer"]
