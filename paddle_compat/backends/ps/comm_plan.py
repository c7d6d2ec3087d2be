"""How one lowered block's send / send_barrier / recv / fetch_barrier ops become RPCs.

The program keeps Paddle's ops (a send after each gradient's producer, a recv per parameter), but the
wire carries ONE `exchange` call per pserver per step: send ops only stage their tensors; the group's
issue point (send_barrier in sync mode, else the first recv, else the last send) calls every pserver at
once (rpc_async to all, then wait), each call carrying all the gradients for that pserver and the names of
all the parameter blocks wanted back; recv ops take their blocks from the answers, and fetch_barrier (or
the last recv) makes sure every answer is in.

Half-async (fleet's half-async strategy): the issue point hands the step's staged gradients to the
trainer's HalfAsyncCommunicator (backends/ps/half_async.py), which queues and merges them with the other
runners' and sends them from its own thread; the step waits there for that round, whose answer carries the
parameters the recv ops take.

A "group" is a run of comm ops: sends, then an optional send_barrier, then recvs, then an optional
fetch_barrier. A trainer main program has one group; its startup program one group without sends.
"""

import torch

from ..selected_rows import merged, pack_rows, split_rows
from .connections import for_executor
from .records import trainer_plan

__all__ = ["CommPlan", "comm_plan_for", "COMM_OPS"]

# The ops this plan batches into one call per pserver per step. Which ops need the pserver runtime is declared
# with each (ops/defs/distributed_ops.py: runtime="ps"); how the trainer's step groups these four (sends, then
# the barrier, recvs, fetch barrier) is this plan's own algorithm, not a fact of any one op.
COMM_OPS = ("send", "send_barrier", "recv", "fetch_barrier")


class _Group:
    def __init__(self):
        self.sends, self.recvs = [], []
        self.barrier = self.fetch = None
        self.issue_at = self.finish_at = None
        self.eps = []
        self.names = {}     # endpoint -> gradient names it gets, in payload order
        self.want = {}      # endpoint -> parameter blocks asked back, in answer order
        self.slots = {}     # send op index -> [(endpoint, payload position)]
        self.picks = {}     # recv op index -> [(endpoint, answer position)]
        # per step
        self.outbox = {}
        self.futs = {}
        self.results = {}

    def closed_for_sends(self):
        return bool(self.recvs) or self.barrier is not None or self.fetch is not None


def comm_plan_for(ctx):
    """The plan of the block being lowered (shared by its comm kernels: declared per-block state)."""
    return ctx.state(CommPlan)


class CommPlan:
    def __init__(self, ctx):
        info = trainer_plan(ctx.program)
        if info is None:
            raise ValueError("send/recv ops run only in a trainer program of pserver mode "
                             "(DistributeTranspiler.transpile / get_trainer_program)")
        self.client = for_executor(ctx.executor, info)
        self.device = ctx.device
        self._what = "the %s exchange" % ("sync step" if info.sync_mode else "step")
        self.half_async = info.half_async
        self._flags = info.communicator_flags
        self.at = {}
        groups, g = [], None
        for i, op in enumerate(ctx.block.ops):
            t = op.type
            if t not in COMM_OPS:
                continue
            if g is None or (t == "send" and g.closed_for_sends()) or (t == "recv" and g.fetch is not None):
                g = _Group()
                groups.append(g)
            if t == "send":
                g.sends.append(i)
            elif t == "send_barrier":
                g.barrier = i
            elif t == "recv":
                g.recvs.append(i)
            else:
                g.fetch = i
            self.at[id(op)] = g
            if t == "fetch_barrier":
                g = None
        ops = ctx.block.ops
        for g in groups:
            g.issue_at = g.barrier if g.barrier is not None else \
                (g.recvs[0] if g.recvs else (g.sends[-1] if g.sends else g.fetch))
            g.finish_at = g.fetch if g.fetch is not None else (g.recvs[-1] if g.recvs else g.issue_at)
            for i in g.sends + g.recvs:
                for ep in ops[i].attrs.get("epmap", []):
                    if ep not in g.eps:
                        g.eps.append(ep)
            g.names = {ep: [] for ep in g.eps}
            g.want = {ep: [] for ep in g.eps}
            for i in g.sends:
                g.slots[i] = []
                for ep, name in zip(ops[i].attrs["epmap"], ops[i].attrs["send_varnames"]):
                    g.slots[i].append((ep, len(g.names[ep])))
                    g.names[ep].append(name)
            for i in g.recvs:
                g.picks[i] = []
                for ep, name in zip(ops[i].attrs["epmap"], ops[i].attrs["recv_varnames"]):
                    g.picks[i].append((ep, len(g.want[ep])))
                    g.want[ep].append(name)
        self.ops_index = {id(op): i for i, op in enumerate(ops)}

    def group_of(self, op):
        return self.at[id(op)], self.ops_index[id(op)]

    # step phases -----------------------------------------------------------------------------------
    def stage(self, g, i, op, xs):
        if i == g.sends[0]:
            g.outbox = {ep: [None] * len(n) for ep, n in g.names.items()}
        sections = op.attrs.get("sections")
        if sections:
            xs = split_rows(merged(xs[0]), sections) if xs[0].is_sparse else torch.split(xs[0], list(sections), 0)
        elif len(xs) == 1 < len(g.slots[i]):
            xs = xs * len(g.slots[i])   # one var to every endpoint (an async trainer's LR step counter)
        stats = self.client.stats
        for (ep, pos), t in zip(g.slots[i], xs):
            if t.device.type != "cpu":
                t = t.cpu()
            if t.is_sparse:   # SelectedRows: only the touched rows, merged, travel (rows, values)
                rows, values = pack_rows(t.detach())
                stats["sparse_rows"] += rows.numel()
                stats["sparse_payloads"] += 1
                g.outbox[ep][pos] = (rows, values)
                continue
            stats["dense_elements"] += t.numel()
            g.outbox[ep][pos] = t.detach()

    def issue(self, g):
        g.futs, g.results = {}, {}
        outbox, g.outbox = g.outbox, {}
        if self.half_async and g.sends:
            if any(t is None for ts in outbox.values() for t in ts) or set(outbox) != set(g.names):
                raise RuntimeError("send ops of this step did not run before the half-async barrier")
            comm = self.client.communicator(self._flags)
            g.results = comm.step(outbox, g.names, {ep: w for ep, w in g.want.items() if w})
            for ep in g.eps:
                g.results.setdefault(ep, [])
            return
        for ep in g.eps:
            names, want = g.names[ep], g.want[ep]
            if names or want:
                tensors = outbox.get(ep) if names else []
                if tensors is None or any(t is None for t in tensors):
                    raise RuntimeError("send ops of this step did not run before their exchange with %s" % ep)
                g.futs[ep] = self.client.exchange_async(ep, names, tensors, want)

    def _answer(self, g, ep):
        res = g.results.get(ep)
        if res is None:
            fut = g.futs.get(ep)
            if fut is None:
                raise RuntimeError("recv from %s before any exchange with it was issued" % ep)
            res = g.results[ep] = self.client.wait(ep, fut, self._what)
        return res

    def take(self, g, i, op):
        out = []
        for ep, pos in g.picks[i]:
            t = self._answer(g, ep)[pos]
            if self.device != "cpu":
                t = t.to(self.device)
            out.append(t)
        if op.attrs.get("sections"):
            return [torch.cat(out, 0)]
        return out

    def finish(self, g):
        for ep in list(g.futs):
            self._answer(g, ep)
        g.futs, g.results = {}, {}

    # kernels ---------------------------------------------------------------------------------------
    def send_kernel(self, op):
        g, i = self.group_of(op)

        def k(xs):
            self.stage(g, i, op, xs)
            if i == g.issue_at:
                self.issue(g)
            if i == g.finish_at:
                self.finish(g)
        return k

    def barrier_kernel(self, op):
        g, i = self.group_of(op)

        def k():
            if i == g.issue_at:
                self.issue(g)
            if i == g.finish_at:
                self.finish(g)
        return k

    def recv_kernel(self, op):
        g, i = self.group_of(op)

        def k():
            if i == g.issue_at:
                self.issue(g)
            out = self.take(g, i, op)
            if i == g.finish_at:
                self.finish(g)
            return out
        return k
