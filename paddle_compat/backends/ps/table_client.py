"""The trainer's side of a distributed lookup table: the prefetch op's RPCs.

One prefetch op carries the id shards of every table it serves; the kernel groups them by pserver and
makes ONE `prefetch` call per pserver (none to a pserver that owes no rows this step), all issued before
any is awaited, so the pservers' lookups and the transfers overlap. Ids travel as row numbers within the
shard (global id - the shard's row offset); rows come back in the order asked. The rows are returned as
autograd leaves (requires_grad) when the block computes gradients: the table's gradient is then theirs.
"""

import collections

import torch

from ...ir.lazy import torch_dtype

from .connections import for_executor
from .records import trainer_plan

__all__ = ["prefetch_kernel"]


def prefetch_kernel(op, ctx):
    info = trainer_plan(ctx.program)
    if info is None:
        raise ValueError("prefetch runs only in a trainer program of pserver mode (a distributed lookup table; "
                         "DistributeTranspiler.transpile / get_trainer_program)")
    client = for_executor(ctx.executor, info)
    eps, names = list(op.attrs["epmap"]), list(op.attrs["table_names"])
    offsets = [int(o) for o in op.attrs["row_offsets"]]
    trainer_id = int(op.attrs.get("trainer_id", info.trainer_id))
    outs = op.output("Out")
    widths, dtypes = [], []
    for n in outs:
        v = ctx.var(n)
        widths.append(int(v.shape[-1]))
        dtypes.append(_torch_dtype(v.dtype))
    by_ep = collections.OrderedDict()
    for j, ep in enumerate(eps):
        by_ep.setdefault(ep, []).append(j)
    device = ctx.device
    stats = client.stats

    def k(xs):
        futs = {}
        for ep, idx in by_ep.items():
            local = [_compact(xs[j].reshape(-1) - offsets[j] if offsets[j] else xs[j].reshape(-1)) for j in idx]
            if all(t.numel() == 0 for t in local):
                continue
            if device != "cpu":
                local = [t.cpu() for t in local]
            futs[ep] = client.call_async(ep, "prefetch", trainer_id, [names[j] for j in idx], local)
            stats["prefetch_calls"] += 1
            stats["prefetch_rows"] += sum(t.numel() for t in local)
        result = [None] * len(xs)
        for ep, fut in futs.items():
            got = client.wait(ep, fut, "the prefetch of table rows")
            for j, t in zip(by_ep[ep], got):
                result[j] = t if device == "cpu" else t.to(device)
        grad = torch.is_grad_enabled()
        for j in range(len(result)):
            if result[j] is None:
                result[j] = torch.empty((0, widths[j]), dtype=dtypes[j], device=device)
            if grad:
                result[j].requires_grad_(True)
        return result
    return k


def _compact(t):
    """RPC sends a view with its whole storage: a shard of the step's ids goes as a tensor of its own."""
    if t.untyped_storage().nbytes() != t.numel() * t.element_size():
        t = t.clone()
    return t


def _torch_dtype(dtype):
    return torch_dtype(dtype)
