"""The op families that stay with the backend: communication (collectives, parameter-server and geo
ops), file and reader I/O, optimizers, tables, SelectedRows accessors and the lowering's fused
ops (lookup groups, optimizer groups). Computation ops are defined in
paddle_compat/ops/defs/. Importing this package registers them (registry.get loads it on first use)."""

from . import (collective_ops, fused_ops, geo_ops, io_ops, optimizer_ops, ps_ops, reader_ops,  # noqa: F401
               rows_ops, table_ops)
