"""geo_sgd: Geo-SGD's delta exchange with the pservers every push_nums steps (fluid/transpiler/ps_geo.py
has the arithmetic, Paddle's GeoSgdCommunicator)."""

import torch

from ...ps.client import get_client
from ....ops import kernel
from ...ps.records import trainer_plan
from .common import attr


@kernel("geo_sgd")
def geo_sgd(op, ctx):
    client = get_client(trainer_plan(ctx.program))
    client.attach(ctx.executor)
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
