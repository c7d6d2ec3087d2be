"""Op families. Importing this package registers every lowering (registry.get loads it on first use)."""

from . import (activation_ops, init_ops, io_ops, loss_ops, math_ops, nn_ops, optimizer_ops,  # noqa: F401
               tensor_ops)
from . import collective_ops  # noqa: F401,E402  (nccl2 / collective mode)
