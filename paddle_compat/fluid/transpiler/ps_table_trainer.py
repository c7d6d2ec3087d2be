"""Trainer side of a distributed lookup table (embedding is_distributed=True): the table never exists on the
trainer. Every lookup_table of the table is replaced, as Paddle did, by one chain per table:

    split_ids  Ids=[ids of every lookup]  -> Out=[<t>.prefetch_in.block<i>]   unique ids of the step, per shard
    prefetch   X=[every table's id shards] -> Out=[<t>.prefetch_out.block<i>]  the rows, from the pservers
    merge_ids  Ids=[ids...], Rows=[prefetch_in...], X=[prefetch_out...] -> Out=[each lookup's output]

One prefetch op serves every table whose lookups can run at one point, so a step costs ONE prefetch RPC
per pserver for all its tables (the kernel overlaps the calls across pservers).

Backward: the table's lookup_table_grad ops (and the `sum` of their @RENAME@ parts) become one
`merge_ids_grad`, recorded like any grad op, so the autograd region computes it: its outputs are the
gradients of the prefetched rows (the prefetch outputs are autograd leaves), i.e. exactly the row
gradients of the step's unique ids, already merged per id and already cut per pserver. Then

    split_ids  Ids=[prefetch_in...], X=[prefetch_out@GRAD...] -> Out=[<t>@GRAD.block<i>]   SelectedRows per shard
    send       X=[<t>@GRAD.block<i>...]                                               rows + values on the wire

Paddle's split_ids cut the SelectedRows <t>@GRAD by id; here the gradient comes out of autograd already
per shard, so split_ids pairs each shard's ids with its rows' gradients (rows renumbered within the shard).
The sends join the step's other sends: one exchange RPC per pserver carries dense and table gradients.
"""

from ...backends.ps.records import is_trainer_program, set_trainer_plan
from ...ir import GRAD_SUFFIX, OP_ROLE_KEY, OP_ROLE_VAR_KEY, OpRole, Operator, VarType
from .ps_plan import TableInfo
from ...ops.defs.init_ops import is_fake_init

__all__ = ["rewrite_tables", "table_var_names", "remote_lookups", "TABLES_KEY"]


def _op(block, type, inputs, outputs, attrs, callsite=None):
    return Operator(block, type, inputs=inputs, outputs=outputs, attrs=attrs, callsite=callsite)


def _declare(block, plan, t):
    chain = plan.chains[t.name]
    w = block.var(t.name)
    for b in chain.blocks:
        block.create_var(name=t.ids_block(b), shape=[-1, 1], dtype="int64", stop_gradient=True)
        block.create_var(name=t.rows_block(b), shape=[-1, t.width], dtype=w.dtype)
        if getattr(plan, "forward_only", False):    # a lookups-only view declares no gradients
            continue
        block.create_var(name=t.rows_block(b) + GRAD_SUFFIX, shape=[-1, t.width], dtype=w.dtype)
        block.create_var(name=b.trainer_grad(plan.trainer_id, plan.suffixed), shape=list(b.shape),
                         dtype=w.dtype, type=VarType.SELECTED_ROWS)


def _forward_ops(plan, block, tables, callsite):
    """split_ids per table, one prefetch for all of them, merge_ids per table."""
    splits, merges = [], []
    xs, outs, eps, names, offsets = [], [], [], [], []
    for t in tables:
        blocks = plan.chains[t.name].blocks
        ins = [t.ids_block(b) for b in blocks]
        rows = [t.rows_block(b) for b in blocks]
        splits.append(_op(block, "split_ids", {"Ids": list(t.ids)}, {"Out": ins}, {
            OP_ROLE_KEY: int(OpRole.Forward), "table": t.name, "height": t.height,
            "height_sections": [b.rows for b in blocks]}, callsite))
        merges.append(_op(block, "merge_ids", {"Ids": list(t.ids), "Rows": ins, "X": rows}, {"Out": list(t.outs)}, {
            OP_ROLE_KEY: int(OpRole.Forward), "table": t.name, "padding_idx": t.padding_idx,
            "keep_ids_shape": [int(k) for k in t.keep_ids_shape]}, callsite))
        xs += ins
        outs += rows
        eps += [b.endpoint for b in blocks]
        names += [b.name for b in blocks]
        offsets += [b.offset for b in blocks]
    # Forward role, as Paddle's prefetch ("more like a forward op"): clone(for_test=True) keeps the chain
    prefetch = _op(block, "prefetch", {"X": xs}, {"Out": outs}, {
        OP_ROLE_KEY: int(OpRole.Forward), "epmap": eps, "table_names": names, "row_offsets": offsets,
        "trainer_id": plan.trainer_id}, callsite)
    return splits + [prefetch] + merges


def _backward_ops(plan, block, t, callsite):
    """merge_ids_grad (in the autograd region), split_ids of the row gradients, send."""
    chain = plan.chains[t.name]
    blocks = chain.blocks
    rows = [t.rows_block(b) for b in blocks]
    out_grads = [o + GRAD_SUFFIX for o in t.outs if block.has_var(o + GRAD_SUFFIX)]
    role_var = {OP_ROLE_VAR_KEY: [t.name, chain.grad]}
    grad = _op(block, "merge_ids_grad", {"Ids": list(t.ids), "Rows": [t.ids_block(b) for b in blocks], "X": rows,
                                          "Out": list(t.outs), "Out" + GRAD_SUFFIX: out_grads},
               {"X" + GRAD_SUFFIX: [r + GRAD_SUFFIX for r in rows]},
               dict(role_var, **{OP_ROLE_KEY: int(OpRole.Backward), "table": t.name}), callsite)
    remote = [b.trainer_grad(plan.trainer_id, plan.suffixed) for b in blocks]
    split = _op(block, "split_ids", {"Ids": [t.ids_block(b) for b in blocks], "X": [r + GRAD_SUFFIX for r in rows]},
                {"Out": remote}, {OP_ROLE_KEY: int(OpRole.Dist), "table": t.name, "height": t.height,
                                  "height_sections": [b.rows for b in blocks]}, callsite)
    send = _op(block, "send", {"X": remote}, {}, dict(role_var, **{
        OP_ROLE_KEY: int(OpRole.RPC), "trainer_id": plan.trainer_id, "epmap": [b.endpoint for b in blocks],
        "send_varnames": remote, "sections": [], "sync_mode": plan.sync_mode, "table": t.name}), callsite)
    return [grad, split, send]


def _producers(ops):
    out = {}
    for i, op in enumerate(ops):
        for n in op.output_arg_names:
            out.setdefault(n, []).append(i)
    return out


def _forward_window(t, ops, lookup_pos, producers):
    """[earliest, latest] positions (in `ops`, lookups still in it) where t's chain can run: after the
    last producer of its ids, before the first reader of a lookup output (so tables whose ids are fed can
    share one prefetch)."""
    first, last = min(lookup_pos), max(lookup_pos)
    made = [i for ids in t.ids for i in producers.get(ids, []) if i not in lookup_pos]
    if any(first < i < last for i in made):
        raise NotImplementedError(
            "transpile: an id input of distributed table '%s' is computed between two of its lookups; compute "
            "every id variable before the table's first lookup" % t.name)
    lo = max([0] + [i + 1 for i in made if i < first])
    outs = set(t.outs)
    readers = [i for i, op in enumerate(ops) if i not in lookup_pos and outs.intersection(op.input_arg_names)]
    hi = min(readers + [i for i in made if i > last] + [len(ops)])
    return lo, hi


def rewrite_tables(plan, block, ops, old_ops):
    """`ops` (the trainer's kept ops) with every table's lookups replaced by its prefetch chain and its
    gradient ops by merge_ids_grad + split_ids + send. `old_ops` is the snapshot's op list the plan's
    indices refer to."""
    if not plan.tables:
        return ops
    pos = {id(op): i for i, op in enumerate(ops)}
    producers = _producers(ops)
    windows, drop, grad_at = [], set(), {}
    for t in plan.tables.values():
        _declare(block, plan, t)
        lookups = set(pos[id(old_ops[i])] for i in t.lookups)
        lo, hi = _forward_window(t, ops, lookups, producers)
        windows.append((lo, hi, t))
        drop |= lookups
        gpos = sorted(pos[id(old_ops[i])] for i in t.grad_ops)
        if gpos:
            drop |= set(gpos)
            grad_at[gpos[-1]] = t
    # tables whose windows overlap share one point (and one prefetch op): greedy interval stabbing
    groups = []
    for lo, hi, t in sorted(windows, key=lambda w: (w[0], w[1])):
        if groups and lo <= groups[-1][1]:
            g = groups[-1]
            g[0], g[1] = max(g[0], lo), min(g[1], hi)
            g[2].append(t)
        else:
            groups.append([lo, hi, [t]])
    insert_at = {g[0]: g[2] for g in groups}
    out = []
    for i in range(len(ops) + 1):
        if i in insert_at:
            tables = insert_at[i]
            out += _forward_ops(plan, block, tables, old_ops[tables[0].lookups[0]].callsite)
        if i == len(ops):
            break
        if i in grad_at:
            out += _backward_ops(plan, block, grad_at[i], ops[i].callsite)
        if i not in drop:
            out.append(ops[i])
    return out


def table_var_names(plan):
    """Vars of the user's program the trainer no longer has: the tables and their gradient (parts)."""
    out = set()
    for t in plan.tables.values():
        out.add(t.name)
        out.add(plan.chains[t.name].grad)
    return out


# -- programs that still look a table up locally ---------------------------------------------------------
# A program that looks a distributed table up with lookup_table (a test program cloned from the main program
# before transpile) has no table on the trainer: `remote_lookups` gives the executor a copy of it whose lookups
# go through the pservers by the same prefetch chain as the trainer program's. Which tables the pservers hold
# is the TrainerPlan of the trainer program the same executor ran (its runtime[TABLES_KEY]): no process-wide
# registry, and a program read back from a file works as the one transpiled in this process.
TABLES_KEY = "trainer_tables"


def holds_values(holder):
    """A scope var holding a table's values: not absent, and not the trainer startup's fake_init shape."""
    return holder is not None and holder.value is not None and not is_fake_init(holder.value)


class _Shard:
    """A table shard as the TrainerPlan records it (what the forward chain reads of a VarBlock)."""

    def __init__(self, index, endpoint, name, offset, rows):
        self.index, self.endpoint, self.name, self.offset, self.rows = index, endpoint, name, int(offset), int(rows)


class _Chain:
    def __init__(self, blocks):
        self.blocks = blocks


class _ForwardPlan:
    """What rewrite_tables reads of a plan, for a program with lookups only (no gradients), from the
    TrainerPlan record of the trainer program."""
    forward_only = True

    def __init__(self, record, tables):
        self.tables, self.trainer_id, self.sync_mode, self.suffixed = tables, record.trainer_id, record.sync_mode, False
        self.chains = {name: _Chain([_Shard(i, *s) for i, s in enumerate(record.tables[name]["shards"])])
                       for name in tables}


def _remote_table_lookups(program, scope, record):
    if record is None or not record.tables or is_trainer_program(program):
        return {}
    out = {}
    for i, op in enumerate(program.global_block().ops):
        if op.type == "lookup_table" and op.attrs.get("is_distributed") and op.input("W")[0] in record.tables:
            name = op.input("W")[0]
            # a local program holding its own table runs as it is (fake_init's placeholder holds no values)
            if not holds_values(scope.find_var(name)):
                out.setdefault(name, []).append(i)
    return out


def remote_lookups(program, scope, record):
    """`program`, or, when it looks up distributed tables of the trainer program whose TrainerPlan is `record`
    and `scope` does not hold them, a copy whose lookups prefetch the rows from the pservers."""
    found = _remote_table_lookups(program, scope, record)
    if not found:
        return program
    view = program.clone()
    block = view.global_block()
    old = block.ops
    tables = {}
    for name, idx in found.items():
        ref = record.tables[name]
        t = tables[name] = TableInfo(name, ref["height"], ref["width"], old[idx[0]].attrs.get("padding_idx", -1))
        for i in idx:
            op = old[i]
            t.lookups.append(i)
            t.ids.append(op.input("Ids")[0])
            t.outs.append(op.output("Out")[0])
    block.ops = rewrite_tables(_ForwardPlan(record, tables), block, list(old), old)
    for name in found:      # the table itself is not on the trainer
        if not any(name in op.input_arg_names for op in block.ops):
            block.vars.pop(name, None)
    set_trainer_plan(view, record)
    view._bump()
    return view
