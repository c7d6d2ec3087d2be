"""fluid.contrib.layers: the contrib layers offered (ops defined in paddle_compat/ops/defs/contrib_ops.py)."""

from . import nn  # noqa: F401
from .nn import *  # noqa: F401,F403

__all__ = list(nn.__all__)
