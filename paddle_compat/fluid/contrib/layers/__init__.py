"""fluid.contrib.layers: the contrib layers offered (ops defined in paddle_compat/ops/defs/contrib_ops.py
and pyramid_hash.py)."""

from . import metric_op, nn, rnn_impl  # noqa: F401
from .metric_op import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .rnn_impl import *  # noqa: F401,F403

__all__ = list(nn.__all__) + list(rnn_impl.__all__) + metric_op.__all__
