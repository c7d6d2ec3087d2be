"""cross_entropy2: the op Paddle 1.8's layers.cross_entropy writes for hard labels (our builder writes
cross_entropy, whose Y it shares). Programs Paddle wrote (a saved training program) carry it, and its grad op
cross_entropy_grad2, which the autograd lowering computes from this kernel.

MatchX is x[label] (0 where the label is ignore_index), as 1.8.5 fills it; XShape only carries the input's
shape for Paddle's grad kernel and is not computed (as for reshape2).
"""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first
from .loss_ops import _hard_ce, _hard_ce_function


def _shape(ins, attrs):
    x = first(ins, "X")
    row = tuple(x.shape[:-1]) + (1,)
    return {"Y": OutMeta(row, x.dtype, x.lod_level), "MatchX": OutMeta(row, x.dtype, x.lod_level)}


@defop("cross_entropy2", inputs=("X", "Label"), outputs=("Y", "MatchX"), infer_shape=_shape, no_grad=("Label",))
def cross_entropy2(op, ctx):
    ignore = attr(op, "ignore_index", -100)

    def k(x, label):
        lab = label.reshape(label.shape[:-1] + (1,)) if label.dim() == x.dim() else label.unsqueeze(-1)
        if lab.dtype != torch.int64:
            lab = lab.long()
        ignored = lab == ignore
        idx = lab.masked_fill(ignored, 0)
        match = torch.gather(x.detach(), -1, idx).masked_fill_(ignored, 0.0)
        if x.requires_grad and torch.is_grad_enabled():
            return _hard_ce_function().apply(x, idx, ignored), match
        return _hard_ce(torch.gather(x, -1, idx), ignored), match

    return k
