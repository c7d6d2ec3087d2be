"""Math ops defined in the one-place form: cumsum."""

from ...ir.lazy import torch
from ..registry import attr, defop
from ..shapes import same_as


# Paddle 1.8 cumsum: axis defaults to -1; `exclusive` shifts by one (first element 0); `reverse` sums from
# the end. Gradient: autograd through the torch ops below (a reversed cumsum of the output grad).
@defop("cumsum", infer_shape=same_as("X"))
def cumsum(op, ctx):
    axis, exclusive, reverse = attr(op, "axis", -1), attr(op, "exclusive", False), attr(op, "reverse", False)

    def k(x):
        if reverse:
            x = torch.flip(x, [axis])
        out = torch.cumsum(x, axis)
        if exclusive:
            out = out - x
        return torch.flip(out, [axis]) if reverse else out

    return k
