"""fluid.layers: builders that append Operators to the current block, laid out by Paddle 1.8.5's module names
(control_flow, detection, device, io, learning_rate_scheduler, loss, math_op_patch, metric_op, nn, ops, rnn,
sequence_lod, tensor, utils, layer_function_generator). Nothing here imports torch."""

from . import (control_flow, detection, device, io, layer_function_generator, learning_rate_scheduler,  # noqa: F401
               loss, math_op_patch, metric_op, nn, ops, rnn, sequence_lod, tensor, utils)
from . import rnn as _rnn_module   # `rnn` becomes the layer below (`from .rnn import *`), as in Paddle
from .control_flow import *  # noqa: F401,F403
from .detection import *  # noqa: F401,F403
from .io import *  # noqa: F401,F403
from .learning_rate_scheduler import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .math_op_patch import monkey_patch_variable
from .metric_op import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .ops import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sequence_lod import *  # noqa: F401,F403
from .tensor import *  # noqa: F401,F403

monkey_patch_variable()

__all__ = (io.__all__ + nn.__all__ + ops.__all__ + tensor.__all__ + loss.__all__ + metric_op.__all__
           + learning_rate_scheduler.__all__ + sequence_lod.__all__ + control_flow.__all__ + _rnn_module.__all__
           + detection.__all__)
