"""Rows gathered by index, and their gradient, at the cost of a copy (merge_ids of a distributed table).

gather_rows(values, index) is values.index_select(0, index) with a faster backward of the same bits. autograd's
own (zeros.index_add_(0, index, grad)) takes the gradient as it comes: a loss sum's is a broadcast (every
stride 0), with which index_add_ takes its scatter path, element by element down each column (35 ms at
131,072 x 64), and a contiguous one of 16 or more columns its sort-and-scatter path (9-16 ms). Here a
broadcast is filled in first, and a large float32 gradient is summed per row by embedding_bag (mode sum) over
the index positions sorted stably by row: each row's bag adds its terms in index order into a zeroed
accumulator, which is what index_add_ computes (3 ms at 131,072 x 64). Whether this torch's embedding_bag
adds in that order is checked once per process against index_add_ on a probe; where it does not,
index_add_ stays in use.
"""

import threading

import torch
import torch.nn.functional as F

__all__ = ["gather_rows", "index_add_rows"]

_BAG_MIN = 16384          # index entries: below this, the sort's set-up costs more than it saves
_state = {}
_lock = threading.Lock()


def gather_rows(values, index, order=None):
    """values.index_select(0, index). order: (the positions of index sorted stably by row, each row's count),
    when the caller has them (split_ids' sort): the backward then sorts nothing."""
    if not (values.requires_grad and torch.is_grad_enabled()):
        return values.index_select(0, index)
    fn = _state.get("fn")
    if fn is None:
        class GatherRows(torch.autograd.Function):
            @staticmethod
            def forward(fctx, v, idx, order):
                fctx.idx, fctx.order, fctx.rows = idx, order, v.shape[0]
                return v.index_select(0, idx)

            @staticmethod
            def backward(fctx, g):
                return index_add_rows(g, fctx.idx, fctx.rows, fctx.order), None, None
        fn = _state["fn"] = GatherRows
    return fn.apply(values, index, order)


def _dense(g):
    if g.numel() and not any(g.stride()):     # a broadcast scalar: fill (copying a stride-0 view is slow)
        return torch.empty(g.shape, dtype=g.dtype, device=g.device).fill_(g.reshape(-1)[0])
    return g.contiguous()


def _bags(g, index, rows, order=None):
    if order is None:
        order, counts = torch.argsort(index, stable=True), torch.bincount(index, minlength=rows)
    else:
        order, counts = order
    offsets = torch.zeros(rows, dtype=torch.int64)
    if rows > 1:
        torch.cumsum(counts[:-1], 0, out=offsets[1:])
    return F.embedding_bag(order, g, offsets, mode="sum")


def _bags_agree():
    ok = _state.get("ok")
    if ok is None:
        with _lock:
            gen = torch.Generator().manual_seed(3)
            for width in (1, 10, 16, 64):
                g = torch.randn(4099, width, generator=gen) * torch.pow(10.0, torch.randint(-8, 9, (4099, width),
                                                                                            generator=gen))
                g[torch.rand(4099, width, generator=gen) < 0.1] = -0.0
                idx = torch.randint(0, 300, (4099,), generator=gen)
                idx[:50] = 300            # a row that only ever sees -0.0 and another seen once
                g[:50] = -0.0
                idx[50] = 301
                want = torch.zeros(303, width).index_add_(0, idx, g)
                try:
                    got = _bags(g, idx, 303)
                except RuntimeError:
                    got = None
                ok = got is not None and torch.equal(got.view(torch.int32), want.view(torch.int32))
                if not ok:
                    break
            _state["ok"] = ok
    return ok


def index_add_rows(g, index, rows, order=None):
    """torch.zeros(rows, ...).index_add_(0, index, g), bit for bit (order: as gather_rows')."""
    g = _dense(g)
    if (g.dim() == 2 and g.dtype == torch.float32 and g.device.type == "cpu" and index.numel() >= _BAG_MIN
            and index.dtype == torch.int64 and _bags_agree()):
        return _bags(g, index, rows, order)
    return g.new_zeros((rows,) + tuple(g.shape[1:])).index_add_(0, index, g)
