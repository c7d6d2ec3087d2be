"""fluid.contrib: the parts of Paddle 1.8's contrib that training scripts import (see each module)."""

from . import extend_optimizer, layers, memory_usage_calc, mixed_precision, op_frequence, reader, utils  # noqa: F401
from .extend_optimizer import *  # noqa: F401,F403
from .layers import *  # noqa: F401,F403
from .memory_usage_calc import *  # noqa: F401,F403
from .op_frequence import *  # noqa: F401,F403
from .reader import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403

__all__ = (extend_optimizer.__all__ + layers.__all__ + memory_usage_calc.__all__ + op_frequence.__all__ + reader.__all__
           + utils.__all__ + ["mixed_precision"])
