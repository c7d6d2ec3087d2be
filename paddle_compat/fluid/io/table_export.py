"""save_inference_model of a pserver-mode trainer program whose embeddings are distributed lookup tables:
the exported model is a local one.

The inference program pruned from the trainer program looks rows up with `split_ids -> prefetch ->
merge_ids`; each table's chain becomes plain `lookup_table` ops on one local parameter named after the table
(shape [height, width]), so the model loads and predicts in any process, ours or Paddle's, without pservers.
A program that still looks the table up itself (the user's main program, or a test program cloned before
transpile) keeps its lookup_table ops, no longer marked distributed.

The table's values are gathered from the pservers' shards by the exporting trainer (any trainer; nothing is
written by the pservers, so the directory need not be reachable by them): it asks each shard for its rows in
chunks with the prefetch RPC that training uses (FLAGS_table_export_chunk_rows rows per call, default: 16 MiB
of rows; the next chunk is in flight while one is written) and streams them into the table's file in
Paddle's tensor format, or into its place, in name order, of the combined parameter file. The trainer's
memory holds two chunks, never the table; the file is height x width x 4 bytes (float32), and whoever loads
the model holds the whole table in memory: that, not the export, limits the size of an exported table.
The values are those of the pservers at the time of the export (in sync mode, after the last completed step).
"""

import os

import numpy as np

from ...backends.ps.connections import for_job
from ...ir.lazy import torch

from ...ir import OP_ROLE_KEY, OpRole, Operator, dtype_name, global_scope
from ...ir.tensor_format import atomic_write, write_lod_tensor, write_lod_tensor_header
from .variables import is_persistable, save_selected
from ...backends.ps.records import TRAINER_PLAN_ATTR, trainer_plan
from ..transpiler.ps_table_trainer import TABLES_KEY, holds_values

__all__ = ["localize_tables", "save_with_tables"]


class _Gather:
    __slots__ = ("name", "info", "height", "width", "dtype", "shards")

    def __init__(self, name, info, dtype):
        t = info.tables[name]
        self.name, self.info, self.dtype = name, info, dtype
        self.height, self.width = int(t["height"]), int(t["width"])
        self.shards = sorted(([ep, var, int(off), int(rows)] for ep, var, off, rows in t["shards"]),
                             key=lambda s: s[2])


def _lookup(block, ids, out, table, padding_idx):
    return Operator(block, "lookup_table", inputs={"Ids": [ids], "W": [table]}, outputs={"Out": [out]},
                    attrs={"is_sparse": False, "is_distributed": False, "remote_prefetch": False,
                           "padding_idx": int(padding_idx), OP_ROLE_KEY: int(OpRole.Forward)})


def localize_tables(program, scope, executor=None):
    """(program, [tables to gather]): the inference `program` with its distributed tables' lookups made local
    (rewritten in place) and what must be gathered from the pservers. ([] when it has none.) A program that
    was not transpiled finds its tables in the TrainerPlan of the trainer program `executor` ran."""
    block = program.global_block()
    gather = {}
    info = trainer_plan(program)
    tables = info.tables if info is not None else {}
    if tables and any(op.type == "merge_ids" for op in block.ops):
        ops, dropped = [], set()
        for op in block.ops:
            # the transpiler's prefetch chain (split_ids -> prefetch -> merge_ids) this export undoes: its own plan
            if op.type in ("split_ids", "prefetch"):
                dropped.update(op.output_arg_names)
                continue
            if op.type == "merge_ids" and op.attrs.get("table") in tables:
                name = op.attrs["table"]
                outs = op.output("Out")
                if name not in gather:
                    gather[name] = _Gather(name, info, dtype_name(block.var(outs[0]).dtype))
                for ids, out in zip(op.input("Ids"), outs):
                    ops.append(_lookup(block, ids, out, name, op.attrs.get("padding_idx", -1)))
                continue
            ops.append(op)
        block.ops = ops
        for n in dropped:
            block.vars.pop(n, None)
    else:   # lookups of a table only the pservers hold, in a program this process did not transpile
        for op in block.ops:
            if op.type != "lookup_table" or not op.attrs.get("is_distributed"):
                continue
            name = op.input("W")[0]
            found = getattr(executor, "runtime", {}).get(TABLES_KEY)
            if found is None or name not in found.tables or holds_values(scope.find_var(name)):
                continue
            op.attrs["is_distributed"] = False
            op.attrs["remote_prefetch"] = False
            gather.setdefault(name, _Gather(name, found, dtype_name(block.var(name).dtype)))
    if not gather:
        return program, []
    for g in gather.values():
        if block.has_var(g.name):
            block.vars.pop(g.name)
        block.create_var(name=g.name, shape=[g.height, g.width], dtype=g.dtype, persistable=True)
    for b in program.blocks:     # the inference program is no trainer of the job any more
        for op in b.ops:
            op.attrs.pop(TRAINER_PLAN_ATTR, None)
    program._bump()
    return program, list(gather.values())


def _chunk_rows(width, itemsize):
    env = os.environ.get("FLAGS_table_export_chunk_rows")
    if env:
        return max(1, int(env))
    return max(1, (16 << 20) // max(1, width * itemsize))


def _stream_table(f, g, executor):
    """Write table g (header, then its rows shard by shard, chunk by chunk) to the open file f."""
    client = for_job(g.info, executor)
    dtype = np.dtype(g.dtype)
    chunk = _chunk_rows(g.width, dtype.itemsize)
    pieces = [(ep, var, off, lo, min(rows, lo + chunk)) for ep, var, off, rows in g.shards
              for lo in range(0, rows, chunk)]
    covered = sum(rows for _, _, _, rows in g.shards)
    if covered != g.height:
        raise ValueError("save_inference_model: the shards of distributed table '%s' hold %d rows, the table has %d"
                         % (g.name, covered, g.height))
    write_lod_tensor_header(f, [g.height, g.width], dtype)
    trainer_id = g.info.trainer_id
    what = "the export of distributed table '%s'" % g.name

    def ask(p):
        ep, var, _, lo, hi = p
        return client.call_async(ep, "prefetch", trainer_id, [var], [torch.arange(lo, hi, dtype=torch.int64)])

    nxt = ask(pieces[0]) if pieces else None
    for i, p in enumerate(pieces):
        fut, nxt = nxt, (ask(pieces[i + 1]) if i + 1 < len(pieces) else None)   # one chunk in flight
        rows = client.wait(p[0], fut, what)[0]
        arr = np.ascontiguousarray(rows.detach().numpy(), dtype=dtype)
        if arr.shape != (p[4] - p[3], g.width):
            raise ValueError("save_inference_model: pserver %s returned rows of shape %s for rows [%d, %d) of '%s'"
                             % (p[0], list(arr.shape), p[2] + p[3], p[2] + p[4], g.name))
        f.write(memoryview(arr.reshape(-1)).cast("B"))


def save_with_tables(executor, dirname, program, gather, params_filename=None):
    """Save the persistables of the localized inference `program`: the tables from the pservers, the rest
    from the scope (one file each, or all in params_filename in name order, as save_persistables does)."""
    tables = {g.name: g for g in gather}
    persist = sorted((v for v in program.list_vars() if is_persistable(v)), key=lambda v: v.name)
    if params_filename is None:
        save_selected(executor, dirname, [v for v in persist if v.name not in tables])
        for g in gather:
            atomic_write(os.path.join(dirname, g.name), lambda f, g=g: _stream_table(f, g, executor))
        return
    scope = global_scope()

    def writer(f):
        seen = set()
        for v in persist:
            if v.name in seen:
                continue
            seen.add(v.name)
            if v.name in tables:
                _stream_table(f, tables[v.name], executor)
                continue
            h = scope.find_var(v.name)
            if h is None or h.value is None:
                raise ValueError("save_inference_model: variable '%s' has no value in the scope (did the startup "
                                 "program run?)" % v.name)
            write_lod_tensor(f, np.asarray(h.value.detach().cpu().numpy()), None)
    atomic_write(os.path.join(dirname, os.path.basename(params_filename)), writer)
