"""The client side of hand-built RPC programs (layers.io Send / Recv): send / send_barrier / recv /
fetch_barrier ops without transpiler attributes, as calls to the layer server (layer_service.py).

A client process is client PADDLE_TRAINER_ID (default 0) of PADDLE_TRAINERS_NUM (default 1) clients and
talks to one server (its group is one job). Each op is one call, answered before the next op runs.
"""

import os

from ..cluster import TRAINER_ID_ENV, TRAINERS_NUM_ENV
from .comm_plan import COMM_OPS
from .connections import for_executor
from .records import TrainerPlan
from .errors import PsError
from .layer_service import digest

__all__ = ["send_kernel", "barrier_kernel", "recv_kernel"]


def _int_env(name, default):
    raw = os.environ.get(name)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError("%s must be an int, got %r" % (name, raw)) from None


class _Client:
    """The kernels of one lowered client block; they share the executor's connection to the one server."""

    def __init__(self, ctx):
        eps = []
        for op in ctx.block.ops:
            if op.type in COMM_OPS:
                for ep in list(op.attrs.get("epmap") or []) + list(op.attrs.get("endpoints") or []):
                    if ep not in eps:
                        eps.append(ep)
        if len(eps) != 1:
            raise PsError("hand-built send/recv ops address %s: a client process talks to exactly one "
                          "server (layers.io.ListenAndServ) here" % (eps or "no endpoint"))
        self.endpoint = eps[0]
        self.trainers = _int_env(TRAINERS_NUM_ENV, 1)
        self.trainer_id = _int_env(TRAINER_ID_ENV, 0)
        if not 0 <= self.trainer_id < self.trainers:
            raise PsError("PADDLE_TRAINER_ID=%d is not one of the %d client(s) of PADDLE_TRAINERS_NUM"
                          % (self.trainer_id, self.trainers))
        self.client = for_executor(ctx.executor, TrainerPlan(
            trainer_id=self.trainer_id, trainers=self.trainers, pserver_endpoints=(self.endpoint,), mode="sync",
            plan_digest=digest(self.trainers), wait_port=True))
        self.device = ctx.device

    def call(self, handler, *args):
        fut = self.client.call_async(self.endpoint, handler, self.trainer_id, *args)
        return self.client.wait(self.endpoint, fut, "'%s' call" % handler)

    def check_ep(self, op):
        for ep in list(op.attrs.get("epmap") or []) + list(op.attrs.get("endpoints") or []):
            if ep != self.endpoint:
                raise PsError("%s op addresses %s, this client's server is %s" % (op.type, ep, self.endpoint))


def _client_for(ctx):
    return ctx.state(_Client)      # one per lowered block (declared per-block state)


def send_kernel(op, ctx):
    c = _client_for(ctx)
    names = op.input("X")

    def k(xs):
        tensors = [x.detach().cpu() for x in xs]
        if any(t.is_sparse for t in tensors):
            raise PsError("send to %s: row-sparse variables are not sent by hand-built send ops" % c.endpoint)
        c.call("layer_send", list(names), tensors)
    return k


def barrier_kernel(op, ctx):
    c = _client_for(ctx)
    handler = "layer_barrier" if op.type == "send_barrier" else "layer_fetch_barrier"
    return lambda: c.call(handler) and None


def recv_kernel(op, ctx):
    c = _client_for(ctx)
    names = op.output("Out")

    def k():
        out = c.call("layer_get", list(names))
        return [t.to(c.device) if c.device != "cpu" else t for t in out]
    return k
