"""Trainer side of pserver mode: the trainer main and startup programs.

Main: the optimize, clip/regularization and LR-schedule ops leave (they run on the pservers); after each
gradient's last producer come `split_byref` (when the parameter is cut into blocks) and `send`; then, in
async mode with an LR schedule, a `send` of this trainer's step counter (ps_plan.py); `send_barrier` (sync;
half-async: where the step waits for the communicator), one `recv` per parameter (outputs: its blocks),
`fetch_barrier` (sync) and `concat` of the blocks of each cut parameter.
Startup: the parameters' init ops stay (they give the variables their shapes; a sparse table's becomes
`fake_init`), optimizer-state and learning-rate inits leave, then the trainer pulls the pservers' initial
weights: `recv` per parameter, `fetch_barrier`, `concat`.

Row-sparse gradients (embedding is_sparse=True) are cut by `split_selected_rows` and travel as SelectedRows:
each block's touched rows, merged (one entry per row, as Paddle's merge_selected_rows) and renumbered
within the block, plus their values (backends/ps/comm_plan.py). A distributed lookup table (embedding
is_distributed=True) leaves the trainer altogether: ps_table_trainer.py.

Paddle renamed an uncut gradient itself to `w@GRAD.trainer_N`; our autograd lowering keys gradients by
`<var>@GRAD`, so the local name stays and the send op's `send_varnames` carries the pserver-side name.
"""

from ...backends.ps.records import TrainerPlan, mode_of
from ...ir import OP_ROLE_KEY, OP_ROLE_VAR_KEY, OpRole, VarType
from ...ops import info
from .ps_table_trainer import rewrite_tables, table_var_names

__all__ = ["build_trainer_main", "build_trainer_startup", "trainer_record", "comm_attrs"]


def comm_attrs(plan, **extra):
    attrs = {OP_ROLE_KEY: int(OpRole.RPC), "trainer_id": plan.trainer_id}
    attrs.update(extra)
    return attrs


def _declare(block, name, shape, like):
    return block.create_var(name=name, shape=shape, dtype=like.dtype, lod_level=like.lod_level, persistable=False)


def _last_producers(block, grads):
    """grad name -> index of the last op writing it (its final value)."""
    last = {}
    for i, op in enumerate(block.ops):
        for n in op.output_arg_names:
            if n in grads:
                last[n] = i
    return last


def _send_ops(plan, block, chain):
    """split_byref (if cut) + send for one gradient, as (type, inputs, outputs, attrs) tuples."""
    gvar = block.var(chain.grad)
    blocks = chain.blocks
    remote = [b.trainer_grad(plan.trainer_id, plan.suffixed) for b in blocks]
    eps = [b.endpoint for b in blocks]
    ops = []
    if len(blocks) > 1 and not plan.runtime_split:
        for b, name in zip(blocks, remote):
            _declare(block, name, b.shape, gvar)
        if gvar.type == VarType.SELECTED_ROWS:   # row-sparse grad (is_sparse): Paddle's split_selected_rows
            ops.append(("split_selected_rows", {"X": [chain.grad]}, {"Out": remote},
                        {OP_ROLE_KEY: int(OpRole.Dist), "height_sections": [b.rows for b in blocks]}))
        else:
            ops.append(("split_byref", {"X": [chain.grad]}, {"Out": remote},
                        {OP_ROLE_KEY: int(OpRole.Dist), "axis": 0, "num": 0,
                         "sections": [b.rows for b in blocks]}))
        send_in = remote
    else:
        send_in = [chain.grad]
    sections = [b.rows for b in blocks] if (len(blocks) > 1 and plan.runtime_split) else []
    ops.append(("send", {"X": send_in}, {}, comm_attrs(
        plan, epmap=eps, send_varnames=remote, sections=sections, sync_mode=plan.sync_mode,
        **{OP_ROLE_VAR_KEY: [chain.param, chain.grad]})))
    return ops


def _counter_send(plan, own):
    """Async LR schedule: this trainer's step counter goes to every pserver each step (added there)."""
    eps = list(plan.endpoints)
    return ("send", {"X": [own]}, {}, comm_attrs(
        plan, epmap=eps, send_varnames=[own] * len(eps), sections=[], sync_mode=False, merge_add=True,
        use_send_handler=False, **{OP_ROLE_VAR_KEY: [own, own]}))


def _recv_ops(plan, block, with_barrier):
    """recv per parameter, [fetch_barrier], concat per cut parameter."""
    ops = []
    for chain in plan.chains.values():
        if chain.table is not None:
            continue    # a distributed table stays on the pservers
        pvar = block.var(chain.param)
        blocks = chain.blocks
        split_here = len(blocks) > 1 and not plan.runtime_split
        if split_here:
            for b in blocks:
                _declare(block, b.name, b.shape, pvar)
        outs = [b.name for b in blocks] if split_here else [chain.param]
        ops.append(("recv", {}, {"Out": outs}, comm_attrs(
            plan, epmap=[b.endpoint for b in blocks], recv_varnames=[b.name for b in blocks],
            sections=[b.rows for b in blocks] if (len(blocks) > 1 and plan.runtime_split) else [],
            **{OP_ROLE_VAR_KEY: [chain.param, chain.grad]})))
    if with_barrier:
        ops.append(("fetch_barrier", {}, {}, comm_attrs(plan, endpoints=list(plan.endpoints))))
    for chain in plan.chains.values():
        if len(chain.blocks) > 1 and not plan.runtime_split and chain.table is None:
            ops.append(("concat", {"X": [b.name for b in chain.blocks]}, {"Out": [chain.param]},
                        {OP_ROLE_KEY: int(OpRole.Dist), "axis": 0}))
    return ops


def _append(block, spec):
    t, ins, outs, attrs = spec
    return block.append_op(type=t, inputs=ins, outputs=outs, attrs=attrs)


def _drop_unused_vars(block, candidates):
    """Drop the candidates no op of the program names. Sub-blocks count: a moved LR schedule's Switch leaves
    its (now unreferenced) case blocks in the trainer program, as Paddle's did, and they name outer vars."""
    used = set()
    for b in block.program.blocks:
        for op in b.ops:
            used.update(op.input_arg_names)
            used.update(op.output_arg_names)
    for n in candidates:
        if n not in used and n in block.vars:
            del block.vars[n]


def build_trainer_main(plan, snapshot):
    """The trainer main program, from a clone of the user's main program (which it does not touch)."""
    prog = snapshot.clone()
    block = prog.global_block()
    old_ops = block.ops
    removed_names = set()
    for i in plan.removed_ops:
        removed_names.update(old_ops[i].input_arg_names + old_ops[i].output_arg_names)
    kept = [op for i, op in enumerate(old_ops) if i not in plan.removed_ops]
    kept = rewrite_tables(plan, block, kept, old_ops)
    removed_names |= table_var_names(plan)
    for op in old_ops:
        removed_names.update(n for n in op.output_arg_names if "@RENAME@" in n)
    block.ops = kept
    grads = {c.grad: c for c in plan.chains.values() if c.table is None}
    last = _last_producers(block, grads)
    missing = [g for g in grads if g not in last]
    if missing:
        raise ValueError("transpile: no op of the program computes gradient(s) %s" % ", ".join(sorted(missing)))
    after = {}
    for g, i in last.items():
        after.setdefault(i, []).append(grads[g])
    block.ops = []
    for i, op in enumerate(kept):
        block.ops.append(op)
        for chain in sorted(after.get(i, []), key=lambda c: c.param):
            for spec in _send_ops(plan, block, chain):
                _append(block, spec)
    for counter, names, _ in plan.step_counters.values():
        own = names[plan.trainer_id]
        removed_names.update(n for n in names if n != own)
        _append(block, _counter_send(plan, own))
    if plan.sync_mode or plan.half_async_trainer:
        # half-async: the barrier at which the step's gradients wait for the communicator's round
        _append(block, ("send_barrier", {}, {}, comm_attrs(plan, endpoints=list(plan.endpoints),
                                                            half_async=plan.half_async_trainer)))
    for spec in _recv_ops(plan, block, plan.sync_mode):
        _append(block, spec)
    _drop_unused_vars(block, removed_names)
    prog._bump()
    return prog


def _fake_init_tables(plan, main):
    """Paddle's sparse tables: the W of every is_sparse lookup_table / nce op and every distributed table;
    here only those the pservers train (the others are the trainer's own)."""
    names = set(plan.tables)
    for op in main.ops:
        # Paddle 1.8.5's own rule (_get_sparse_table_names), not a fact of the ops: these two, not every op with a
        # row-sparse gradient (lookup_table_v2's and hierarchical_sigmoid's tables keep their init)
        if op.type in ("lookup_table", "nce") and op.attrs.get("is_sparse"):
            # the table is the declared sparse_grad_slot: nce's is its Weight (Paddle asked nce for a "W" input
            # it lacks, and failed)
            names.update(op.input(info(op.type).sparse_grad_slot)[:1])
    return set(n for n in names if n in plan.chains and not plan.geo)


def _fake_init(block, name):
    """A `fake_init` op in place of a sparse table's init (Paddle 1.8's get_trainer_program): the trainer
    never reads the table's initial values (a distributed table's rows come by prefetch; another table is
    pulled by the recv below), so it gets the shape without values, and a distributed table no memory.
    Paddle appended fake_init after the recvs, which its resize-only op allowed; here it stands where the
    init was, before the recv that gives the table its values."""
    v = block.var(name)
    op = block.append_op(type="fake_init", inputs={}, outputs={"Out": [name]},
                         attrs={OP_ROLE_KEY: int(OpRole.Forward), "shape": [int(d) for d in v.shape]})
    block.ops.pop()
    return op


def build_trainer_startup(plan, snapshot, main_snapshot):
    """The trainer startup: parameter inits, no optimizer-state inits, then pull the pservers' weights."""
    prog = snapshot.clone()
    block = prog.global_block()
    # as Paddle: the inits of what the optimize ops read (learning rate, optimizer state) leave; an
    # LR-schedule var no optimize op reads (the step counter) keeps its init, unused here
    main = main_snapshot.global_block()
    remote_only = set()
    for chain in plan.chains.values():
        remote_only.update(chain.state)
        for i in chain.ops:
            remote_only.update(n for n in main.ops[i].input_arg_names if n not in (chain.param, chain.grad))
    # a var the trainer program still uses keeps its init (e.g. a learning rate the user also fetches)
    still_used = set()
    for i, op in enumerate(main_snapshot.global_block().ops):
        if i not in plan.removed_ops:
            still_used.update(op.input_arg_names + op.output_arg_names)
    remote_only -= still_used
    fake = _fake_init_tables(plan, main)
    kept, dropped = [], set()
    for op in block.ops:
        outs = op.output_arg_names
        if len(outs) == 1 and outs[0] in fake:
            kept.append(_fake_init(block, outs[0]))
            fake.discard(outs[0])
            continue
        if outs and all(n in remote_only for n in outs):
            dropped.update(outs)
            continue
        kept.append(op)
    block.ops = kept
    # async LR schedule: every trainer's step counter holds the step it sends (Paddle 1.8 prepended them)
    for counter, names, step in plan.step_counters.values():
        cv = main.var(counter)
        for n in names:
            block.create_var(name=n, shape=cv.shape, dtype=cv.dtype, persistable=True)
            op = block.append_op(type="fill_constant", outputs={"Out": [n]},
                                 attrs={OP_ROLE_KEY: int(OpRole.Forward), "shape": [int(d) for d in cv.shape],
                                        "dtype": int(cv.dtype), "value": step, "force_cpu": True})
            block.ops.pop()
            block.ops.insert(0, op)
    for chain in plan.chains.values():
        if chain.table is None and not block.has_var(chain.param):
            mv = main_snapshot.global_block().var(chain.param)
            block.create_var(name=chain.param, shape=mv.shape, dtype=mv.dtype, persistable=True)
    for spec in _recv_ops(plan, block, True):
        _append(block, spec)
    _drop_unused_vars(block, dropped)
    prog._bump()
    return prog


def trainer_record(plan, wait_port, geo=False):
    """The TrainerPlan the trainer programs' RPC ops carry (records.py)."""
    return TrainerPlan(
        trainer_id=plan.trainer_id, trainers=plan.trainers, pserver_endpoints=tuple(plan.endpoints),
        mode=mode_of(plan.sync_mode, plan.half_async_trainer, geo), wait_port=bool(wait_port),
        plan_digest=plan.digest, remote_vars=plan.remote_vars(), tables=plan.tables_info())
