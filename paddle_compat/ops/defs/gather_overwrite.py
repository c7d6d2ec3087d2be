"""gather's gradient in Paddle's default overwrite mode: where an index repeats, the gradient row of its last
occurrence is kept, not the sum (1.8.5's CPU ScatterAssign writes the rows in order). overwrite=False sums
them, as plain autograd of index_select does."""

from ...ir.lazy import torch

__all__ = ["gather_rows"]

_FN = []


def gather_rows(x, idx, overwrite):
    """x[idx] along dim 0 (idx 1-D int64) with Paddle's gradient for `overwrite`."""
    if not overwrite or not (x.requires_grad and torch.is_grad_enabled()):
        return torch.index_select(x, 0, idx)
    return _function().apply(x, idx)


def _last_occurrence(idx, rows):
    pos = torch.arange(idx.numel(), device=idx.device)
    last = torch.full((rows,), -1, dtype=pos.dtype, device=idx.device).scatter_reduce(0, idx, pos, "amax")
    return last[idx] == pos


def _function():
    if not _FN:
        class GatherOverwrite(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, idx):
                ctx.save_for_backward(idx)
                ctx.rows = x.shape[0]
                ctx.x_shape = x.shape
                return torch.index_select(x, 0, idx)

            @staticmethod
            def backward(ctx, g):
                idx, = ctx.saved_tensors
                keep = _last_occurrence(idx, ctx.rows).reshape((-1,) + (1,) * (g.dim() - 1))
                # the other occurrences add exact zeros (where, not a product: an inf or nan row stays out), so
                # nothing is sized by the data: no boolean indexing, which reads a count back on a GPU
                kept = torch.where(keep, g, g.new_zeros(()))
                return g.new_zeros(ctx.x_shape).index_add(0, idx, kept), None
        _FN.append(GatherOverwrite)
    return _FN[0]
