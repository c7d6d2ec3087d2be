"""Op families. Importing this package registers every lowering (registry.get loads it on first use)."""

from . import (activation_ops, collective_ops, geo_ops, init_ops, io_ops, loss_ops, math_ops, metric_ops,  # noqa: F401
               nn_ops, optimizer_ops, ps_ops, reader_ops, sequence_ops, table_ops, tensor_ops)
