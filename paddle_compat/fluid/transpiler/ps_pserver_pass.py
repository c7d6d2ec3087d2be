"""Pserver main program: block 0 holds only `listen_and_serv`; one optimize sub-block per parameter block
on this endpoint (sync: `sum` of the trainers' gradient parts, `scale(1/trainers)`, then the parameter's
clip/regularization ops and its optimizer op; async: the optimizer op alone), after the LR-schedule block
when the learning rate is scheduled. A pserver holding nothing gets one empty block. In async mode the
LR block's step counter is `sum` of per-trainer counters, which each push adds to (ps_plan.py).

Paddle named a cut parameter's optimizer state (moments, beta pows) like the whole one, so two blocks of one
parameter on one pserver (possible with HashName) shared, and double-updated, the same state. Here the
state of block i of a cut parameter is `<state>.block<i>`.

A distributed lookup table shard gets a table optimize block (sync: `sum` of the trainers' row gradients,
NOT scaled: Paddle 1.x sums a table's gradients over trainers while it averages dense ones), then, after
the optimize blocks, a prefetch block per shard and one checkpoint block (ps_table_pserver.py).

Vars the LR block computes and the optimize blocks read are persistable here: each block is lowered to
its own function, so what crosses blocks lives in the pserver's scope (as all vars did in Paddle).
"""

from ...backends.ps.records import OptimizeBlock, PserverPlan, mode_of, set_pserver_plan
from ...ir import Block, OP_ROLE_KEY, OP_ROLE_VAR_KEY, OpRole, Program, VarType, notify_changed
from .ps_plan import is_optimizer_op
from .ps_slicing import block_name
from .ps_table_pserver import table_blocks

__all__ = ["build_pserver_main", "TRAINER_ID_VAR", "bak_name"]

TRAINER_ID_VAR = "@TRAINER_ID@"


def bak_name(param_block, trainer_id):
    """DC-ASGD: the copy of a parameter block that trainer `trainer_id` last pulled."""
    return "%s.trainer_%d_bak" % (param_block, trainer_id)


def _decl(block, name, shape, like, persistable, **kw):
    kw.setdefault("type", like.type)
    return block.create_var(name=name, shape=shape, dtype=like.dtype, lod_level=like.lod_level,
                            persistable=persistable, **kw)


def _block_renames(chain, b, src):
    """Names and shapes of one parameter block's vars: {orig name: (new name, new shape)}."""
    pshape = tuple(src.var(chain.param).shape)

    def shape_of(n):
        s = tuple(src.var(n).shape)
        return list(b.shape) if s == pshape else list(s)

    ren = {chain.param: (b.name, list(b.shape)), chain.grad: (b.merged_grad, list(b.shape))}
    for s, kind in chain.state.items():
        ren[s] = (b.state_name(s), list(b.shape) if kind == "rows" else shape_of(s))
    for t in chain.temps:
        ren[t] = (block_name(t, b.index, b.nblocks), shape_of(t))
    return ren


def _copy_op(block, op, ren, role, role_var=None):
    ins = {k: [ren.get(n, n) for n in v] for k, v in op.inputs.items()}
    outs = {k: [ren.get(n, n) for n in v] for k, v in op.outputs.items()}
    attrs = dict(op.attrs)
    attrs[OP_ROLE_KEY] = int(role)
    if role_var is not None:
        attrs[OP_ROLE_VAR_KEY] = list(role_var)
    return block.append_op(type=op.type, inputs=ins, outputs=outs, attrs=attrs)


def _dc_asgd_ops(plan, gb, ob, b, grad_name, pvar):
    """Delay compensation (DC-ASGD): g += g * g * (w - w_bak[trainer]), w_bak = what that trainer pulled."""
    baks = [bak_name(b.name, t) for t in range(plan.trainers)]
    for n in baks:
        _decl(gb, n, b.shape, pvar, True)
    if not gb.has_var(TRAINER_ID_VAR):
        gb.create_var(name=TRAINER_ID_VAR, shape=[1], dtype="int64", persistable=False)
    local = _decl(ob, "%s.local_bak" % b.name, b.shape, pvar, False).name
    o1 = _decl(ob, "%s.dc_diff" % b.name, b.shape, pvar, False).name
    o2 = _decl(ob, "%s.dc_gsq" % b.name, b.shape, pvar, False).name
    o3 = _decl(ob, "%s.dc_comp" % b.name, b.shape, pvar, False).name
    role = {OP_ROLE_KEY: int(OpRole.Optimize)}
    ob.append_op(type="ref_by_trainer_id", inputs={"X": baks, "TrainerId": [TRAINER_ID_VAR]},
                 outputs={"Out": [local]}, attrs=dict(role))
    ob.append_op(type="elementwise_sub", inputs={"X": [b.name], "Y": [local]}, outputs={"Out": [o1]},
                 attrs=dict(role))
    ob.append_op(type="elementwise_mul", inputs={"X": [grad_name], "Y": [grad_name]}, outputs={"Out": [o2]},
                 attrs=dict(role))
    ob.append_op(type="elementwise_mul", inputs={"X": [o1], "Y": [o2]}, outputs={"Out": [o3]}, attrs=dict(role))
    ob.append_op(type="elementwise_add", inputs={"X": [grad_name], "Y": [o3]}, outputs={"Out": [grad_name]},
                 attrs=dict(role))
    return baks


def _lr_block(plan, prog, src):
    """The LR-schedule ops, moved from the trainer; vars they share with other blocks live in block 0."""
    gb = prog.global_block()
    lb = prog._create_block(0)
    shared = set(plan.global_vars)
    for i in plan.lr_ops:
        op = src.ops[i]
        if i in plan.step_counters:
            # async: the counter is the sum of the per-trainer counters the trainers push (Paddle 1.8's form)
            counter, names, _ = plan.step_counters[i]
            for n in names + [counter]:
                if not gb.has_var(n):
                    v = src.var(n)
                    _decl(gb, n, v.shape, v, True)
            lb.append_op(type="sum", inputs={"X": names}, outputs={"Out": [counter]},
                         attrs={OP_ROLE_KEY: int(OpRole.LRSched)})
            continue
        for n in op.input_arg_names + op.output_arg_names:
            if lb.has_var(n) or gb.has_var(n):
                continue
            v = src.var(n)
            if n in shared:
                _decl(gb, n, v.shape, v, True)
            else:
                _decl(lb, n, v.shape, v, False)
        _clone_sub_blocks(prog, src.program, _copy_op(lb, op, {}, OpRole.LRSched))
    prog._rollback()
    return lb


def _clone_sub_blocks(prog, src_program, op):
    """An LR-schedule op holding sub-blocks (a Switch's conditional_block) gets copies of them in the pserver
    program, children of the block that holds the op, as Paddle did; its attrs then name the copies (the
    trainer's block indices mean other blocks here). Outer vars the copies name are declared in block 0."""
    for name, val in list(op.attrs.items()):
        many = isinstance(val, (list, tuple)) and val and all(isinstance(b, Block) for b in val)
        if not (isinstance(val, Block) or many):
            continue
        copies = []
        for sb in (val if many else [val]):
            sb = src_program.block(sb.idx)
            nb = prog._create_block(op.block.idx)
            for v in sb.vars.values():
                v._copy_meta_to(nb)
            for sop in sb.ops:
                for n in sop.input_arg_names + sop.output_arg_names:
                    if nb._find_var_recursive(n) is None:
                        v = sb._find_var_recursive(n)
                        _decl(prog.global_block(), n, v.shape, v, v.persistable)
                _clone_sub_blocks(prog, src_program, _copy_op(nb, sop, {}, OpRole.LRSched))
            prog._rollback()
            copies.append(nb)
        op.attrs[name] = copies if many else copies[0]


def _optimize_block(plan, prog, src, chain, b, info):
    gb = prog.global_block()
    ob = prog._create_block(0)
    ren = _block_renames(chain, b, src)
    pvar = src.var(chain.param)
    _decl(gb, b.name, b.shape, pvar, True)
    for orig, (name, shape) in ren.items():
        if orig in (chain.param, chain.grad):
            continue
        v = src.var(orig)
        if orig in chain.state:
            _decl(gb, name, shape, v, True)
        else:
            _decl(ob, name, shape, v, False)
    gvar = src.var(chain.grad)
    table = chain.table is not None
    kw = {"type": VarType.SELECTED_ROWS} if table else {}
    merged = b.merged_grad
    role_var = [b.name, merged]
    role = {OP_ROLE_KEY: int(OpRole.Optimize), OP_ROLE_VAR_KEY: role_var}
    if plan.suffixed:
        parts = [b.trainer_grad(t, True) for t in range(plan.trainers)]
        for n in parts:
            _decl(gb, n, b.shape, gvar, False, **kw)
        _decl(gb, merged, b.shape, gvar, False, **kw)
        ob.append_op(type="sum", inputs={"X": parts}, outputs={"Out": [merged]}, attrs=dict(role))
        if not table:   # a table's row gradients are summed over trainers, not averaged (Paddle 1.x)
            ob.append_op(type="scale", inputs={"X": [merged]}, outputs={"Out": [merged]},
                         attrs=dict(role, scale=1.0 / plan.trainers, bias=0.0, bias_after_scale=True))
        inputs = parts
    else:
        _decl(gb, merged, b.shape, gvar, False, **kw)
        inputs = [merged]
    names = {k: v[0] for k, v in ren.items()}
    baks = []
    for i in chain.ops:
        op = src.ops[i]
        # DC-ASGD compensates dense blocks only (Paddle's did not cover tables either)
        if plan.dc_asgd and not plan.sync_mode and is_optimizer_op(op) and not table:
            g = op.input("Grad")[0]
            baks = _dc_asgd_ops(plan, gb, ob, b, names.get(g, g), pvar)
        _copy_op(ob, op, names, OpRole.Optimize, role_var)
    prog._rollback()
    info.append({"block": ob.idx, "param": b.name, "grad": merged, "inputs": inputs, "baks": baks,
                 "feeds": inputs + ([TRAINER_ID_VAR] if baks else []),
                 "orig": chain.param, "offset": b.offset, "rows": b.rows,
                 "sparse": table or gvar.type == VarType.SELECTED_ROWS})
    return ob


def _distributed_mode(plan):
    """Paddle 1.8's DistributedMode of the transpiler: SYNC (0); ASYNC (1) when the trainer splits and sends
    at run time (runtime_split_send_recv: fleet's async and half-async strategies); else HALF_ASYNC (2).
    Only the attribute: the pserver's behaviour follows sync_mode and the strategy's half_async."""
    if plan.sync_mode:
        return 0
    return 1 if plan.runtime_split else 2


def build_pserver_main(plan, src_program, endpoint):
    src = src_program.global_block()
    prog = Program()
    prog.random_seed = src_program.random_seed
    gb = prog.global_block()
    for n in plan.global_vars:
        v = src.var(n)
        _decl(gb, n, v.shape, v, True)
    optimize_blocks = []
    lr_block_id = -1
    if plan.lr_ops:
        lb = _lr_block(plan, prog, src)
        optimize_blocks.append(lb)
        lr_block_id = lb.idx
    info = []
    for b in plan.ordered_blocks_on(endpoint):
        optimize_blocks.append(_optimize_block(plan, prog, src, plan.chains[b.param], b, info))
    if not optimize_blocks:
        optimize_blocks.append(prog._create_block(0))
        prog._rollback()
    grad_to_block_id = ["%s:%d" % (d["grad"], d["block"]) for d in info]
    prefetch, checkpoint_id, tables = table_blocks(plan, prog, src, endpoint)
    gb.append_op(type="listen_and_serv", inputs={"X": []}, outputs={}, attrs={
        OP_ROLE_KEY: int(OpRole.RPC), "endpoint": endpoint, "pserver_id": plan.endpoints.index(endpoint),
        "Fanin": plan.trainers, "optimize_blocks": optimize_blocks, "grad_to_block_id": grad_to_block_id,
        "sync_mode": plan.sync_mode, "distributed_mode": _distributed_mode(plan),
        "lr_decay_block_id": lr_block_id, "dc_asgd": plan.dc_asgd and not plan.sync_mode,
        "sparse_grad_to_param": ["%s:%s" % (d["grad"], d["param"]) for d in info if d["sparse"]],
        "prefetch_var_name_to_block_id": prefetch,
        "checkpint_block_id": checkpoint_id,     # sic: Paddle's attribute name
        "rpc_get_thread_num": 12, "rpc_send_thread_num": 12, "rpc_prefetch_thread_num": 12})
    prog._is_distributed = True
    prog._endpoints = list(plan.endpoints)
    prog._ps_endpoint = endpoint
    set_pserver_plan(prog, pserver_record(plan, endpoint, info, lr_block_id, tables))
    prog._bump()
    notify_changed(prog, "DistributeTranspiler.get_pserver_program")
    return prog


def local_vars(plan, endpoint):
    """{var on this pserver: [original name, row offset, rows, kind, what]}: what load_persistables reads
    where; kind "rows" (a row block of the original) or "replica" (a copy of it); what "param", "state"
    (optimizer state of one parameter) or "global" (learning rate, LR counter); "table" / "table_state" for
    a distributed table's shard and its state (each pserver saves those itself, see fluid/io/dist.py)."""
    out = {}
    for b in plan.ordered_blocks_on(endpoint):
        chain = plan.chains[b.param]
        table = chain.table is not None
        out[b.name] = [chain.param, b.offset, b.rows, "rows", "table" if table else "param"]
        for s, kind in chain.state.items():
            out[b.state_name(s)] = [s, b.offset, b.rows, kind, "table_state" if table else "state"]
    for n in plan.global_vars:
        if n not in plan.lr_outputs:
            out[n] = [n, 0, 0, "replica", "global"]
    return out


def pserver_record(plan, endpoint, info, lr_block_id, tables, geo=False):
    """The PserverPlan the listen_and_serv op carries (records.py)."""
    return PserverPlan(
        endpoint=endpoint, pserver_id=plan.endpoints.index(endpoint), pserver_endpoints=tuple(plan.endpoints),
        trainers=plan.trainers, mode=mode_of(plan.sync_mode, geo=geo),
        dc_asgd=bool(plan.dc_asgd and not plan.sync_mode), plan_digest=plan.digest,
        blocks=tuple(OptimizeBlock(**d) for d in info), lr_block=lr_block_id,
        # async: per-trainer step counters a push adds to (the LR block sums them)
        step_counters=tuple(n for _, names, _ in plan.step_counters.values() for n in names),
        placement=tuple((b.name, tuple(b.shape)) for b in plan.blocks_on(endpoint)),   # dispatch order
        local_vars=local_vars(plan, endpoint), tables=tables)
