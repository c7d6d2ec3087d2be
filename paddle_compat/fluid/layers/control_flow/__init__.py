"""Paddle's fluid.layers.control_flow: While, cond, case, switch_case, Switch and tensor arrays (flow.py),
comparisons and increment (compare.py), StaticRNN, DynamicRNN, IfElse and LoD rank tables (rnn_blocks.py)."""

from . import compare, flow, rnn_blocks
from .compare import *  # noqa: F401,F403
from .flow import *  # noqa: F401,F403
from .rnn_blocks import *  # noqa: F401,F403
from ..tensor import tensor_array_to_tensor  # noqa: F401  (Paddle defines it in control_flow.py)

__all__ = flow.__all__ + compare.__all__ + rnn_blocks.__all__
