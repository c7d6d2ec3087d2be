"""Loss-scaling ops for mixed precision: check_finite_and_unscale and update_loss_scaling.

Paddle 1.8's contrib.mixed_precision builds the scaling update from `layers.Switch` sub-blocks; Paddle 2.0 fused
it into two ops of these types, slots and attributes. contrib.mixed_precision.decorate keeps 1.8.5's ops up to
its finiteness check (reduce_sum, concat, reduce_sum, isfinite) and then appends logical_not and the fused
update_loss_scaling (no control flow in the program) with 1.8's decisions (see its counting);
check_finite_and_unscale is Paddle 2.0's per-element check, for programs that name it.
"""

from ...ir.lazy import torch
from ..registry import attr, defop


@defop("check_finite_and_unscale", inputs=("X*", "Scale"), outputs=("Out*", "FoundInfinite"), differentiable=False)
def check_finite_and_unscale(op, ctx):
    def k(xs, scale):
        with torch.no_grad():
            found = torch.zeros((1,), dtype=torch.bool, device=scale.device)
            for x in xs:
                found = found | ~torch.isfinite(x).all()
            inv = 1.0 / scale
            # a step with an inf/nan gradient leaves every gradient 0 (the optimizer then skips it)
            outs = [torch.where(found, torch.zeros_like(x), x * inv.to(x.dtype)) for x in xs]
            return outs, found
    return k


# Counting as Paddle 1.8's Switch program counts (Paddle 2.x's op of this name grows one step earlier): a finite
# step whose good-step count (before it) is >= incr_every_n_steps grows the scaling (if the result is finite)
# and resets both counts, else counts one more good step; a non-finite step whose bad-step count is
# >= decr_every_n_nan_or_inf shrinks it (not below 1) and resets, else counts one more bad step.
@defop("update_loss_scaling", inputs=("X*", "FoundInfinite", "PrevLossScaling", "InGoodSteps", "InBadSteps"),
       outputs=("Out*", "LossScaling", "OutGoodSteps", "OutBadSteps"), differentiable=False)
def update_loss_scaling(op, ctx):
    incr_n, decr_n = int(attr(op, "incr_every_n_steps")), int(attr(op, "decr_every_n_nan_or_inf"))
    incr_ratio, decr_ratio = float(attr(op, "incr_ratio")), float(attr(op, "decr_ratio"))

    def k(xs, found, scale, good, bad):
        with torch.no_grad():
            update_scaling(found, scale, good, bad, incr_n, decr_n, incr_ratio, decr_ratio)
            outs = [torch.where(found, 0.0, x) for x in xs]      # (a scalar: no zeros_like kernel per gradient)
            return outs, scale, good, bad
    return k


def update_scaling(found, scale, good, bad, incr_n, decr_n, incr_ratio, decr_ratio):
    """The loss scaling and the step counts after a step whose gradients were (found) not finite, in place."""
    grow = ~found & (good >= incr_n)
    shrink = found & (bad >= decr_n)
    up = scale * incr_ratio
    up = torch.where(torch.isfinite(up), up, scale)
    down = torch.clamp(scale * decr_ratio, min=1.0)
    new_scale = torch.where(grow, up, torch.where(shrink, down, scale))
    reset = grow | shrink
    good_n = torch.where(reset | found, torch.zeros_like(good), good + 1)
    bad_n = torch.where(reset | ~found, torch.zeros_like(bad), bad + 1)
    scale.copy_(new_scale)
    good.copy_(good_n)
    bad.copy_(bad_n)
