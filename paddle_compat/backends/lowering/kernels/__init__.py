"""Op families. Importing this package registers every lowering (registry.get loads it on first use)."""

from . import (activation_ops, init_ops, io_ops, loss_ops, math_ops, nn_ops, optimizer_ops,  # noqa: F401
               tensor_ops)
from . import ps_ops  # noqa: F401,E402  (pserver mode: send/recv/listen_and_serv)
