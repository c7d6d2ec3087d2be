"""The op families whose kernels stay with the lowering: collective communication, file and reader I/O,
optimizers, tables, SelectedRows accessors and the lowering's fused ops (lookup groups, optimizer groups).
Computation ops are defined in paddle_compat/ops/defs/. Importing this package registers them (registry.get
loads it on first use). The pserver runtime's ops (declared runtime="ps") register from
backends/ps/kernels.py, which the registry loads only for a program that holds one (registry.provide)."""

from . import collective_ops, fused_ops, io_ops, optimizer_ops, reader_ops, rows_ops, table_ops  # noqa: F401
