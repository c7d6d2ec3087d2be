"""Pserver-mode ops: send / send_barrier / recv / fetch_barrier (trainer side, batched into one RPC per
pserver per step by backends/ps/comm_plan.py), listen_and_serv (the pserver service), and the local
helpers split_byref and ref_by_trainer_id. The pserver runtime (backends/ps) loads with the kernels, when a
first block is lowered."""

import torch

# table_service: imported, it serves the distributed tables' prefetch and save
from ...ps import layer_client, service, table_service  # noqa: F401
from ...ps.comm_plan import comm_plan_for
from ...ps.layer_service import LayerServer
from ...ps.records import pserver_plan, trainer_plan
from ...selected_rows import merged, split_rows
from ....ops import kernel
from .common import attr


def _plan(ctx):
    return comm_plan_for(ctx)


def _layer_client():
    """The runtime of hand-built programs' send / recv / barriers (layers.io Send, Recv)."""
    return layer_client


def _hand_built(ctx, role):
    """Ops of a program that was not transpiled (layers.io ListenAndServ / Send / Recv). A transpiled
    program that lost its job facts (a parsed copy) is not one: its ops name the pserver-side variables
    (send_varnames / recv_varnames) or the pserver (pserver_id), and it keeps the transpiler's error."""
    if (trainer_plan if role == "trainer" else pserver_plan)(ctx.program) is not None:
        return False
    for op in ctx.block.ops:
        a = op.attrs
        if a.get("send_varnames") or a.get("recv_varnames") or a.get("pserver_id", -1) not in (-1, None):
            return False
    return True


@kernel("send")
def send(op, ctx):
    if _hand_built(ctx, "trainer"):
        return _layer_client().send_kernel(op, ctx)
    return _plan(ctx).send_kernel(op)


@kernel(["send_barrier", "fetch_barrier"])
def barrier(op, ctx):
    if _hand_built(ctx, "trainer"):
        return _layer_client().barrier_kernel(op, ctx)
    return _plan(ctx).barrier_kernel(op)


@kernel("recv")
def recv(op, ctx):
    if _hand_built(ctx, "trainer"):
        return _layer_client().recv_kernel(op, ctx)
    return _plan(ctx).recv_kernel(op)


@kernel("listen_and_serv")
def listen_and_serv(op, ctx):
    def k():
        if _hand_built(ctx, "pserver"):
            LayerServer(op, ctx.program, ctx.scope, ctx.device, ctx.executor).serve()
            return
        service.PServerService(ctx.program, ctx.scope, ctx.device, ctx.executor).serve()
    return k


@kernel(["split_byref", "split_selected_rows"])
def split_byref(op, ctx):
    """Row blocks of X as views (no copy), as Paddle's split_byref; split_selected_rows cuts a row-sparse
    gradient (is_sparse) at its height_sections into one SelectedRows per block, rows merged first (each
    touched row once) and renumbered within the block: only those rows are then sent."""
    sections = [int(s) for s in (attr(op, "sections", None) or attr(op, "height_sections", []))]
    axis = int(attr(op, "axis", 0))

    def k(x):
        if x.is_sparse:
            return split_rows(merged(x), sections)
        return list(torch.split(x, sections, axis))
    return k


@kernel("ref_by_trainer_id")
def ref_by_trainer_id(op, ctx):
    return lambda xs, tid: xs[int(tid.reshape(-1)[0])]
