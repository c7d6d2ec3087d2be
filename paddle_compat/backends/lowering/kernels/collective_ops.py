"""Collective ops of nccl2 and collective mode, on torch.distributed process groups (backends/comm.py).

gen_nccl_id      -> forms the trainers' group; the group itself is the value of the NCCLID variable, where
                    ParallelExecutor / with_data_parallel find it (Paddle's executor read NCCLID the same way).
c_gen_nccl_id    -> the ring's endpoint list (its Out variable); c_comm_init forms the ring's group.
c_allreduce_*    -> start an allreduce; unless use_calc_stream, c_sync_comm_stream waits for it, like
c_broadcast         Paddle's communication stream (gloo works on its own thread meanwhile).
c_sync_calc_stream  nothing to do: torch orders a group's work after the producing kernels itself.
"""

import torch
import torch.distributed as dist

from ... import comm
from ....ops import kernel
from .common import attr


@kernel("gen_nccl_id")
def gen_nccl_id(op, ctx):
    trainers, trainer_id, device = list(attr(op, "trainers")), int(attr(op, "trainer_id")), ctx.device
    return lambda: comm.connect(trainers, trainer_id, device, tag="nccl2")


class RingPeers:
    """What c_gen_nccl_id leaves in its Out variable: the ring's endpoints in rank order."""

    def __init__(self, endpoints, rank):
        self.endpoints, self.rank = endpoints, rank

    def __repr__(self):
        return "<RingPeers rank %d of %s>" % (self.rank, ",".join(self.endpoints))


@kernel("c_gen_nccl_id")
def c_gen_nccl_id(op, ctx):
    rank, me, others = int(attr(op, "rank")), attr(op, "endpoint"), list(attr(op, "other_endpoints"))
    endpoints = others[:rank] + [me] + others[rank:]
    return lambda: RingPeers(endpoints, rank)


@kernel("c_comm_init")
def c_comm_init(op, ctx):
    nranks, rank, ring_id, device = int(attr(op, "nranks")), int(attr(op, "rank")), int(attr(op, "ring_id", 0)), \
        ctx.device

    def k(peers):
        if not isinstance(peers, RingPeers) or len(peers.endpoints) != nranks or peers.rank != rank:
            raise ValueError("c_comm_init(ring %d): its input is not the output of a matching c_gen_nccl_id "
                             "(nranks %d, rank %d; got %r)" % (ring_id, nranks, rank, peers))
        comm.register_ring(ring_id, comm.connect(peers.endpoints, rank, device, tag="ring%d" % ring_id))
    return k


def _start(op, launch, what):
    """Common body of the async collectives: run `launch(comm, tensor)` on a dense, contiguous tensor."""
    ring_id, sync = int(attr(op, "ring_id", 0)), bool(attr(op, "use_calc_stream", False))
    inplace = op.input("X") == op.output("Out")

    def k(x):
        c = comm.ring(ring_id)
        t = x.detach()
        if t.is_sparse:
            t = t.to_dense()   # Paddle allgathered SelectedRows; a dense sum gives the same update
        elif not inplace or not t.is_contiguous():
            t = t.clone(memory_format=torch.contiguous_format)
        work = launch(c, t)
        if sync:
            c.wait(work, what)
        else:
            c.pending.append((work, what))
        return t
    return k


for _name, _op in [("c_allreduce_sum", dist.ReduceOp.SUM), ("c_allreduce_max", dist.ReduceOp.MAX),
                   ("c_allreduce_min", dist.ReduceOp.MIN), ("c_allreduce_prod", dist.ReduceOp.PRODUCT)]:
    kernel(_name)(lambda op, ctx, _op=_op, _name=_name:
                    _start(op, lambda c, t: c.allreduce_async(t, _op), _name))


@kernel("c_broadcast")
def c_broadcast(op, ctx):
    root = int(attr(op, "root", 0))
    return _start(op, lambda c, t: c.broadcast_async(t, root), "c_broadcast")


@kernel("c_sync_calc_stream")
def c_sync_calc_stream(op, ctx):
    return lambda x: x


@kernel("c_sync_comm_stream")
def c_sync_comm_stream(op, ctx):
    ring_id = int(attr(op, "ring_id", 0))

    def k(xs):
        comm.ring(ring_id).sync()
        return xs
    return k
