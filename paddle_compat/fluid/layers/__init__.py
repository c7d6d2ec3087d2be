"""fluid.layers: builders that append Operators to the current block. Nothing here imports torch."""

import sys

from . import math_more, shape_more, loss_more, nn_more, random_misc, io_more
from . import io, learning_rate_scheduler, loss, math_ext, metric_op, nn, normalization, ops, sequence_lod, tensor
from . import recurrent
from .recurrent import *  # noqa: F401,F403
from . import seq_ext
from .seq_ext import *  # noqa: F401,F403
from . import crf
from . import sampled_loss
from . import ctc_chunk
from .ctc_chunk import *  # noqa: F401,F403
from .sampled_loss import *  # noqa: F401,F403
from .crf import *  # noqa: F401,F403
from . import beam_decode, seq_more
from .seq_more import *  # noqa: F401,F403
from .beam_decode import *  # noqa: F401,F403
from . import control_flow
from . import vision_more, misc_ext, detection
from .detection import *  # noqa: F401,F403
from .misc_ext import *  # noqa: F401,F403
from .vision_more import *  # noqa: F401,F403
from .control_flow import *  # noqa: F401,F403
from . import rnn_flow
from .rnn_flow import *  # noqa: F401,F403
from . import rnn_cells
from .rnn_cells import *  # noqa: F401,F403
from . import decoding
from .decoding import *  # noqa: F401,F403
from .io import *  # noqa: F401,F403
from .learning_rate_scheduler import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .math_ext import *  # noqa: F401,F403
from .math_more import *  # noqa: F401,F403
from .shape_more import *  # noqa: F401,F403
from .loss_more import *  # noqa: F401,F403
from .nn_more import *  # noqa: F401,F403
from .random_misc import *  # noqa: F401,F403
from .io_more import *  # noqa: F401,F403
from .math_op_patch import monkey_patch_variable
from .metric_op import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .ops import *  # noqa: F401,F403
from .sequence_lod import *  # noqa: F401,F403
from .tensor import *  # noqa: F401,F403

monkey_patch_variable()

__all__ = (io.__all__ + nn.__all__ + ops.__all__ + tensor.__all__ + loss.__all__ + metric_op.__all__
           + math_ext.__all__ + learning_rate_scheduler.__all__ + normalization.__all__ + sequence_lod.__all__
           + recurrent.__all__ + seq_ext.__all__ + crf.__all__ + control_flow.__all__ + rnn_flow.__all__
           + rnn_cells.__all__ + decoding.__all__ + beam_decode.__all__ + seq_more.__all__
           + sampled_loss.__all__ + ctc_chunk.__all__)
__all__ += (math_more.__all__ + shape_more.__all__ + loss_more.__all__ + nn_more.__all__ + random_misc.__all__
            + io_more.__all__)
__all__ += vision_more.__all__ + misc_ext.__all__ + detection.__all__

from . import module_names as _module_names  # noqa: E402

_module_names.install(sys.modules[__name__])
