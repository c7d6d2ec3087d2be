"""The pserver runtime's kernels, registered against the op declarations (ops/defs/distributed_ops.py, whose
`runtime="ps"` says so): send / send_barrier / recv / fetch_barrier (trainer side, batched into one call per
pserver per step by comm_plan.py), listen_and_serv (the pserver service), prefetch (a distributed table's
rows, table_client.py) and geo_sgd (Geo-SGD's delta exchange).

The lowering knows nothing of this module: backends/ps/__init__.py tells its registry how to load it, and the
registry does so the first time it lowers a program holding one of these ops, so torch and the pserver
runtime load only in pserver mode.
"""

import torch

from ...ops import attr, kernel
from . import layer_client, service
from .connections import for_executor
from .comm_plan import comm_plan_for
from .layer_service import LayerServer
from .records import pserver_plan, trainer_plan
from .table_client import prefetch_kernel


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
        return layer_client.send_kernel(op, ctx)
    return comm_plan_for(ctx).send_kernel(op)


@kernel(["send_barrier", "fetch_barrier"])
def barrier(op, ctx):
    if _hand_built(ctx, "trainer"):
        return layer_client.barrier_kernel(op, ctx)
    return comm_plan_for(ctx).barrier_kernel(op)


@kernel("recv")
def recv(op, ctx):
    if _hand_built(ctx, "trainer"):
        return layer_client.recv_kernel(op, ctx)
    return comm_plan_for(ctx).recv_kernel(op)


@kernel("listen_and_serv")
def listen_and_serv(op, ctx):
    def k():
        if _hand_built(ctx, "pserver"):
            LayerServer(op, ctx.program, ctx.scope, ctx.device, ctx.executor).serve()
            return
        service.PServerService(ctx.program, ctx.scope, ctx.device, ctx.executor).serve()
    return k


@kernel("prefetch")
def prefetch(op, ctx):
    return prefetch_kernel(op, ctx)


@kernel("geo_sgd")
def geo_sgd(op, ctx):
    """Every push_nums-th step: delta = (x - old) / trainers; old += delta; send it; then x += p - old and
    old = p, p the pserver's block after our delta (fluid/transpiler/ps_geo.py, Paddle's GeoSgdCommunicator)."""
    client = for_executor(ctx.executor, trainer_plan(ctx.program))
    every, scale = int(attr(op, "push_nums")), 1.0 / int(attr(op, "trainers"))
    layout = attr(op, "layout")
    device = ctx.device
    steps = [0]

    def k(xs, olds):
        steps[0] += 1
        if steps[0] % every:
            return xs, olds
        with torch.no_grad():
            per_ep = {}
            for (_, blocks), x, old in zip(layout, xs, olds):
                for block_name, delta_name, ep, off, rows in blocks:
                    xb, ob = x[off:off + rows], old[off:off + rows]
                    delta = (xb - ob) * scale
                    ob.add_(delta)
                    names, tensors, want, views = per_ep.setdefault(ep, ([], [], [], []))
                    names.append(delta_name)
                    tensors.append(delta.cpu())
                    want.append(block_name)
                    views.append((xb, ob))
            futs = {ep: client.exchange_async(ep, e[0], e[1], e[2]) for ep, e in per_ep.items()}   # overlapped
            for ep, fut in futs.items():
                for (xb, ob), p in zip(per_ep[ep][3], client.wait(ep, fut, "the Geo-SGD exchange")):
                    p = p.to(device)
                    xb.add_(p - ob)     # everyone else's progress since our last exchange
                    ob.copy_(p)
        return xs, olds
    return k
