"""Distributed lookup table ops (see fluid/transpiler/ps_table_trainer.py for the program they form):

  split_ids      forward: the unique ids of all lookups of a table (ascending), cut at the shards' row
                 ranges; gradient form (X given): each shard's ids paired with their rows' gradients as a
                 SelectedRows of the shard (rows renumbered within it)
  prefetch       the rows of those ids from the pservers (its kernel is the pserver runtime's:
                 backends/ps/kernels.py, table_client.py)
  merge_ids      each lookup's output gathered from the prefetched rows
  lookup_sparse_table  the pserver's prefetch block: rows of its shard
"""

import numpy as np
import torch

from ...row_gather import gather_rows
from ...selected_rows import make_rows
from ....ir import SelectedRows
from ....ops import kernel
from ....ops.defs.lookup_table import id_range_error, lookup_ids, zero_padding
from .common import attr


def _flat_ids(ids):
    return lookup_ids(ids, flatten=True)


def _unique(flat):
    """(sorted unique ids, inverse index, (the positions sorted stably by id, each unique id's count) or None).

    On the CPU: one numpy sort of id * 2^b + position (b bits hold a position), keys that are all distinct,
    so the sort is stable by construction and gives the ids' order and the positions' permutation at once
    (merge_ids' gradient sums by it: row_gather.py). numpy's int64 sort is a SIMD sort: 0.5 ms at 131,072 ids
    where torch.unique takes 5 ms and torch.argsort(stable) 8 ms. Ids whose keys would overflow take
    torch.unique."""
    n = flat.numel()
    if flat.device.type == "cpu" and n > 1:
        bits = (n - 1).bit_length()
        lo, hi = (int(v) for v in torch.aminmax(flat))
        if -(1 << (62 - bits)) < lo and hi < (1 << (62 - bits)):
            a = flat.numpy().astype(np.int64, copy=False)
            key = np.sort((a << bits) + np.arange(n, dtype=np.int64))
            ids, perm = key >> bits, key & ((1 << bits) - 1)
            new = np.empty(n, dtype=bool)
            new[0] = True
            np.not_equal(ids[1:], ids[:-1], out=new[1:])
            starts = np.flatnonzero(new)
            inv = np.empty(n, dtype=np.int64)
            inv[perm] = np.cumsum(new) - 1
            counts = np.diff(np.append(starts, n))
            return (torch.from_numpy(ids[starts]), torch.from_numpy(inv),
                    (torch.from_numpy(perm), torch.from_numpy(counts)))
    uniq, inv = torch.unique(flat, sorted=True, return_inverse=True)
    return uniq, inv, None


class StepIds(dict):
    """Per lowered block (ctx.state(StepIds)): table -> the inverse index split_ids computed this step, for
    merge_ids."""

    def __init__(self, ctx):
        super().__init__()


def _step_ids(ctx):
    return ctx.state(StepIds)


def _split_by_mod(op, ctx, ids_list):
    """Paddle's split_ids (an op built by hand, without the transpiler's height_sections): id i goes to output
    i % n. Dense ids: all inputs' ids, each once, ascending, as [k, 1] per output. A SelectedRows `Ids`: its
    rows (in order) and their value rows, into the outputs' SelectedRows (those the scope holds are filled in
    place, as Paddle's kernel fills the variables' own SelectedRows)."""
    names = op.output("Out")
    n = len(names)
    first = ids_list[0]
    if not isinstance(first, SelectedRows):
        uniq = torch.unique(torch.cat([_flat_ids(i) for i in ids_list]), sorted=True)
        return [uniq[uniq % n == i].reshape(-1, 1) for i in range(n)]
    rows, values = first.rows(), first._value
    where = {r: k for k, r in enumerate(rows)}      # a repeated row takes its last value row, as in Paddle
    outs = []
    for i, name in enumerate(names):
        held = ctx.scope.find_var(name) if ctx.scope is not None else None
        out = held.value if held is not None and isinstance(held.value, SelectedRows) else SelectedRows()
        mine = [r for r in rows if r % n == i]
        out.set_rows(mine)
        out.set_height(first.height())
        out._value = values.index_select(0, torch.tensor([where[r] for r in mine], dtype=torch.int64,
                                                         device=values.device))
        outs.append(out)
    return outs


@kernel("split_ids")
def split_ids(op, ctx):
    if attr(op, "height_sections") is None:
        return lambda ids_list, xs: _split_by_mod(op, ctx, ids_list)
    sections = [int(s) for s in attr(op, "height_sections")]
    height, table = int(attr(op, "height")), attr(op, "table", op.input("Ids")[0])
    offsets = [0]
    for s in sections:
        offsets.append(offsets[-1] + s)
    if offsets[-1] != height:
        raise ValueError("split_ids: sections %s do not add up to the height %d of table %s"
                         % (sections, height, table))
    inner = torch.tensor(offsets[1:-1], dtype=torch.int64)
    names = op.input("Ids")
    state = _step_ids(ctx)

    def grads(ids_list, xs):
        return [make_rows(_flat_ids(ids) - off, g, n, coalesced=True)
                for ids, g, off, n in zip(ids_list, xs, offsets, sections)]

    def k(ids_list, xs):
        if xs:
            return grads(ids_list, xs)
        flat = torch.cat([_flat_ids(i) for i in ids_list]) if len(ids_list) > 1 else _flat_ids(ids_list[0])
        uniq, inv, order = _unique(flat)
        if uniq.numel() and (int(uniq[0]) < 0 or int(uniq[-1]) >= height):
            raise id_range_error("lookup_table", names, "the distributed table %s" % table, height, uniq)
        state[(table, tuple(names))] = (inv, order)   # merge_ids of the same ids gathers with it (no search)
        cuts = torch.searchsorted(uniq, inner.to(uniq.device)).tolist()
        bounds = [0] + cuts + [uniq.numel()]
        return [uniq[a:b].reshape(-1, 1) for a, b in zip(bounds[:-1], bounds[1:])]
    return k


@kernel("merge_ids")
def merge_ids(op, ctx):
    padding_idx = int(attr(op, "padding_idx", -1))
    key = (attr(op, "table", None), tuple(op.input("Ids")))
    # per lookup: 1 for lookup_table_v2, whose output keeps the ids' trailing dim of 1
    keep_shape = [bool(k) for k in (attr(op, "keep_ids_shape", None) or [0] * len(op.input("Ids")))]
    state = _step_ids(ctx)

    def k(ids_list, rows_list, xs, lods):
        values = torch.cat(xs) if len(xs) > 1 else xs[0]
        flats = [_flat_ids(i) for i in ids_list]
        flat = torch.cat(flats) if len(flats) > 1 else flats[0]
        pos, order = state.pop(key, (None, None))
        if order is not None and order[1].numel() != values.shape[0]:
            order = None
        if pos is None or pos.numel() != flat.numel():
            order = None
            keys = torch.cat([r.reshape(-1) for r in rows_list]) if len(rows_list) > 1 else rows_list[0].reshape(-1)
            if key[0] is not None:
                # the transpiler's shards are ascending row ranges and each shard's ids ascend: sorted keys
                pos = torch.searchsorted(keys, flat)
            else:   # Paddle's merge_ids built by hand: rows in any order (split_ids shards by id % n)
                order = torch.argsort(keys)
                pos = order[torch.searchsorted(keys[order], flat)]
        out = gather_rows(values, pos, order)   # index_select; its gradient: row_gather.py
        out = zero_padding(out, flat, padding_idx)     # (and no gradient reaches that row)
        parts = torch.split(out, [f.numel() for f in flats]) if len(flats) > 1 else (out,)
        outs = []
        for ids, part, keep in zip(ids_list, parts, keep_shape):
            lead = tuple(ids.shape[:-1]) if not keep and ids.dim() > 1 and ids.shape[-1] == 1 else tuple(ids.shape)
            outs.append(part if part.shape[:-1] == lead else part.reshape(lead + (part.shape[-1],)))
        return outs, list(lods)
    return k


def _grown_rows(op, w, flat):
    """Paddle's lookup on a SelectedRows table (an op test's hand-built W): an id's row is its position in
    W.rows(); an id not there yet is appended to rows() and takes the next row of W's value (is_test: it is
    not added, and its output row is zeros)."""
    is_test = bool(attr(op, "is_test", False))
    values, rows = w._value, w._rows
    index = {r: i for i, r in enumerate(rows)}
    pos = []
    for i in flat.tolist():
        j = index.get(i)
        if j is None and not is_test:
            j = index[i] = len(rows)
            if j >= values.shape[0]:
                raise IndexError("lookup_sparse_table: table %s is full (%d rows) at id %d"
                                 % (op.input("W")[0], values.shape[0], i))
            rows.append(i)
        pos.append(-1 if j is None else j)
    pos = torch.tensor(pos, dtype=torch.int64, device=values.device)
    out = values.index_select(0, pos.clamp(min=0))
    return out.masked_fill((pos < 0).unsqueeze(-1), 0) if is_test else out


@kernel("lookup_sparse_table")
def lookup_sparse_table(op, ctx):
    table, shard = attr(op, "table", "?"), op.input("W")[0]
    ids_name = op.input("Ids")[0]

    def k(ids, w):
        flat = _flat_ids(ids)
        if isinstance(w, SelectedRows):
            return _grown_rows(op, w, flat)
        try:
            return w.index_select(0, flat)   # checks the range itself: no extra pass over the ids
        except (IndexError, RuntimeError):
            raise id_range_error("lookup_sparse_table", ids_name, "the shard %s of table %s" % (shard, table),
                                 w.shape[0], flat) from None
    return k
