"""The pserver runtime's kernels, registered against the op declarations (ops/defs/distributed_ops.py, whose
`runtime="ps"` says so): send / send_barrier / recv / fetch_barrier (trainer side, batched into one call per
pserver per step by comm_plan.py), listen_and_serv (the pserver service), prefetch (a distributed table's
rows, table_client.py), geo_sgd (Geo-SGD's delta exchange) and recv_save (slices read from hand-built
servers, layer_reader.py, saved as one file).

The lowering knows nothing of this module: backends/ps/__init__.py tells its registry how to load it, and the
registry does so the first time it lowers a program holding one of these ops, so torch and the pserver
runtime load only in pserver mode.
"""

import os

import torch

from ...ir import tensor_format
from ...ops import attr, kernel
from . import layer_client, service
from .connections import for_executor
from .comm_plan import comm_plan_for
from .layer_reader import read_vars
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


@kernel("recv_save")
def recv_save(op, ctx):
    """Paddle 1.8's recv_save (what its io.save_persistables runs for a program whose parameters live on
    servers, Program._parameters_on_pservers): slice i is the variable remote_varnames[i] of the server at
    endpoints[i], of shape slice_shapes[i] ("5,8"); the slices, in order, make the variable of `shape`, which
    is written to file_path in Paddle's tensor format (its directories made)."""
    eps = list(attr(op, "endpoints", []) or [])
    names = list(attr(op, "remote_varnames", []) or [])
    shapes = [[int(d) for d in str(s).split(",") if d.strip()] for s in (attr(op, "slice_shapes", []) or [])]
    shape = [int(d) for d in (attr(op, "shape", []) or [])]
    path, overwrite = attr(op, "file_path"), attr(op, "overwrite", True)
    if not (len(eps) == len(names) == len(shapes)) or not eps:
        raise ValueError("recv_save: endpoints %s, remote_varnames %s and slice_shapes %s must have one entry "
                         "per slice" % (eps, names, attr(op, "slice_shapes", [])))

    def k():
        pieces = []
        for ep, name, want in zip(eps, names, shapes):
            t, = read_vars(ep, [name])
            if list(t.shape) != want:
                raise ValueError("recv_save: %s from server %s has shape %s, slice_shapes says %s"
                                 % (name, ep, list(t.shape), want))
            pieces.append(t)
        whole = torch.cat(pieces, 0) if len(pieces) > 1 else pieces[0]
        if shape and list(whole.shape) != shape:
            raise ValueError("recv_save: the slices of %s from %s make shape %s, not its shape %s"
                             % (path, eps, list(whole.shape), shape))
        if not overwrite and os.path.exists(path):
            raise FileExistsError("recv_save: %s exists and overwrite=False" % path)
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        arr = whole.numpy()
        tensor_format.atomic_write(path, lambda f: tensor_format.write_lod_tensor(f, arr))
    return k
