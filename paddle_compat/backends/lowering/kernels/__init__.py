"""Op families. Importing this package registers every lowering (registry.get loads it on first use)."""

from . import (activation_ops, init_ops, io_ops, loss_ops, math_ops, metric_ops, nn_ops, optimizer_ops,  # noqa: F401
               reader_ops, sequence_ops, tensor_ops)
