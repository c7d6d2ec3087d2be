"""Geo-SGD (config.geo_sgd_mode, Fleet's GeoStrategy): trainers train with their own optimizer and, every
`geo_sgd_need_push_nums` steps, exchange parameter *deltas* with the pservers (Paddle 1.7's GeoSgdTranspiler).

Trainer main: the user's program unchanged (forward, backward, optimizer, LR schedule all stay local), then
one `geo_sgd` op over every parameter. Each k-th step it computes, per parameter block,
    delta = (param - old) / trainers;  old += delta;  send delta
(one exchange per pserver, overlapped), receives the pserver's current block p and sets
    param += p - old;  old = p
which is the arithmetic of Paddle's GeoSgdCommunicator (Paddle ran it in a C++ thread outside the program;
here it is a visible op, so the program says where the communication happens).
Trainer startup: the user's startup (the local optimizer's state included), the pservers' initial weights
(recv), then `old = param` (`<param>@GEO_OLD`, persistable).
Pserver: `listen_and_serv` with one block per parameter block holding `sum(param, delta) -> param` (Paddle's
geo pserver block), applied as each delta arrives (async); its startup initialises only the parameter blocks.
"""

import copy

from ...ir import OP_ROLE_KEY, OP_ROLE_VAR_KEY, OpRole, Program, notify_changed
from ...backends.ps.records import set_pserver_plan
from .ps_pserver_pass import _decl, pserver_record
from .ps_startup_pass import build_pserver_startup
from .ps_trainer_pass import _append, _recv_ops

__all__ = ["GEO_OLD_SUFFIX", "build_geo_trainer_main", "build_geo_trainer_startup", "build_geo_pserver_main",
           "build_geo_pserver_startup", "check_geo"]

GEO_OLD_SUFFIX = "@GEO_OLD"


def check_geo(cfg, plan):
    if plan.tables:
        raise NotImplementedError("Geo-SGD with a distributed lookup table (%s) is not supported; use sync or "
                                  "async pserver mode for tables" % ", ".join(plan.tables))
    if cfg.enable_dc_asgd:
        raise ValueError("config.enable_dc_asgd does not apply to Geo-SGD (there are no stale gradients)")
    n = cfg.geo_sgd_need_push_nums
    if not isinstance(n, int) or n < 1:
        raise ValueError("config.geo_sgd_need_push_nums must be a positive int, got %r" % (n,))


def _layout(plan):
    """Per parameter: [param, [[block var, delta var, endpoint, row offset, rows], ...]]."""
    return [[c.param, [[b.name, b.merged_grad, b.endpoint, b.offset, b.rows] for b in c.blocks]]
            for c in plan.chains.values()]


def build_geo_trainer_main(plan, snapshot, push_nums):
    prog = snapshot.clone()
    block = prog.global_block()
    params = list(plan.chains)
    olds = []
    for p in params:
        v = block.var(p)
        olds.append(block.create_var(name=p + GEO_OLD_SUFFIX, shape=v.shape, dtype=v.dtype, persistable=True).name)
    block.append_op(type="geo_sgd", inputs={"X": params, "Old": olds}, outputs={"Out": params, "OldOut": olds},
                    attrs={OP_ROLE_KEY: int(OpRole.RPC), "trainer_id": plan.trainer_id, "trainers": plan.trainers,
                           "push_nums": int(push_nums), "layout": _layout(plan),
                           "endpoints": list(plan.endpoints)})
    prog._bump()
    return prog


def build_geo_trainer_startup(plan, snapshot, main_snapshot):
    prog = snapshot.clone()
    block = prog.global_block()
    for chain in plan.chains.values():
        if not block.has_var(chain.param):
            mv = main_snapshot.global_block().var(chain.param)
            block.create_var(name=chain.param, shape=mv.shape, dtype=mv.dtype, persistable=True)
    for spec in _recv_ops(plan, block, True):
        _append(block, spec)
    for chain in plan.chains.values():
        v = block.var(chain.param)
        old = block.create_var(name=chain.param + GEO_OLD_SUFFIX, shape=v.shape, dtype=v.dtype, persistable=True)
        block.append_op(type="assign", inputs={"X": [chain.param]}, outputs={"Out": [old]},
                        attrs={OP_ROLE_KEY: int(OpRole.Dist)})
    prog._bump()
    return prog


def _pserver_plan(plan):
    """The plan as the pservers see it in Geo-SGD: parameter blocks only (no optimizer state, no LR)."""
    p = copy.copy(plan)
    p.chains = copy.copy(plan.chains)
    for name, chain in plan.chains.items():
        c = copy.copy(chain)
        c.state, c.temps, c.ops = type(chain.state)(), set(), []
        p.chains[name] = c
    p.global_vars, p.lr_ops, p.lr_outputs = [], [], set()
    p.sync_mode = False
    return p


def build_geo_pserver_main(plan, src_program, endpoint):
    gplan = _pserver_plan(plan)
    src = src_program.global_block()
    prog = Program()
    prog.random_seed = src_program.random_seed
    gb = prog.global_block()
    blocks, info = [], []
    for b in gplan.ordered_blocks_on(endpoint):
        pvar = src.var(b.param)
        _decl(gb, b.name, b.shape, pvar, True)
        _decl(gb, b.merged_grad, b.shape, pvar, False)
        ob = prog._create_block(0)
        ob.append_op(type="sum", inputs={"X": [b.name, b.merged_grad]}, outputs={"Out": [b.name]},
                     attrs={OP_ROLE_KEY: int(OpRole.Optimize), OP_ROLE_VAR_KEY: [b.name, b.merged_grad]})
        prog._rollback()
        blocks.append(ob)
        info.append({"block": ob.idx, "param": b.name, "grad": b.merged_grad, "inputs": [b.merged_grad],
                     "baks": [], "feeds": [b.merged_grad], "orig": b.param, "offset": b.offset, "rows": b.rows,
                     "sparse": False})
    if not blocks:
        blocks.append(prog._create_block(0))
        prog._rollback()
    gb.append_op(type="listen_and_serv", inputs={"X": []}, outputs={}, attrs={
        OP_ROLE_KEY: int(OpRole.RPC), "endpoint": endpoint, "pserver_id": plan.endpoints.index(endpoint),
        "Fanin": plan.trainers, "optimize_blocks": blocks,
        "grad_to_block_id": ["%s:%d" % (d["grad"], d["block"]) for d in info], "sync_mode": False,
        "distributed_mode": 3,   # Paddle's DistributedMode.GEO
        "lr_decay_block_id": -1, "dc_asgd": False, "sparse_grad_to_param": [],
        "prefetch_var_name_to_block_id": [], "checkpint_block_id": -1,
        "rpc_get_thread_num": 12, "rpc_send_thread_num": 12, "rpc_prefetch_thread_num": 12})
    prog._is_distributed = True
    prog._endpoints = list(plan.endpoints)
    prog._ps_endpoint = endpoint
    set_pserver_plan(prog, pserver_record(gplan, endpoint, info, -1, {}, geo=True))
    prog._bump()
    notify_changed(prog, "DistributeTranspiler.get_pserver_program (geo)")
    return prog


def build_geo_pserver_startup(plan, src_main, src_startup, endpoint):
    return build_pserver_startup(_pserver_plan(plan), src_main, src_startup, endpoint)
