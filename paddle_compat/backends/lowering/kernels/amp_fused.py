"""The fused dynamic loss-scaling check of contrib.mixed_precision (see backends/lowering/fusion_amp.py):
gradients divided by the loss scaling, the step's finiteness, the scaling update, a bad step's gradients zeroed.

The ops it replaces decide "not finite" when the float32 sum of the per-gradient sums (Paddle's Eigen order on
the CPU, ops/eigen_reduce.py) is inf or nan. That is so exactly when (a) some quotient is inf or nan (an inf
or nan summand can never sum back to a finite value), or (b) a partial sum overflows. With every element
finite, no partial sum in any order can exceed sum_i(max|q_i| * n_i) grown by its rounding, (1 + u)^N for N
additions; where that bound stays below the dtype's largest value, (b) is impossible and the step is finite
without taking a single sum. Only otherwise (gradients within a factor of the overflow) are the sums taken,
as the ops take them. So the decisions, and the quotients (true divisions, as elementwise_div), are the ops'.

On the CPU the decision is read on the host (free there) so a finite step skips the k zeroing wheres. On a GPU
the sums are torch's (as the unfused ops' are) and nothing is read back (the step stays capturable).
"""

import math

import torch

from ..fusion_amp import FUSED_AMP_CHECK
from ..registry import register
from .common import attr
from ....ops import eigen_reduce
from ....ops.defs.amp_ops import update_scaling


def _found_by_sums(quots):
    """The unfused ops' verdict: reduce_sum of each, concat, reduce_sum, isfinite, logical_not."""
    sums = [eigen_reduce.reduce_sum(q, None).reshape(1) for q in quots]
    return ~torch.isfinite(eigen_reduce.reduce_sum(torch.cat(sums), None)).all().reshape(1)


def _found_cpu(quots):
    maxes = torch.stack(torch._foreach_norm(quots, float("inf")))     # inf or nan where a quotient is
    if not bool(torch.isfinite(maxes).all()):
        return True
    n = sum(q.numel() for q in quots) + len(quots)
    bound = float((maxes.double() * torch.tensor([float(q.numel()) for q in quots], dtype=torch.float64)).sum())
    big = min(torch.finfo(q.dtype).max for q in quots)
    if bound * math.exp(n * 2.0 ** -23) < big:
        return False
    return bool(_found_by_sums(quots))


@register(FUSED_AMP_CHECK, inputs=("X*", "PrevLossScaling", "InGoodSteps", "InBadSteps"),
          outputs=("Out*", "FoundInfinite", "LossScaling", "OutGoodSteps", "OutBadSteps"))
def fused_amp_unscale_check_update(op, ctx):
    incr_n, decr_n = int(attr(op, "incr_every_n_steps")), int(attr(op, "decr_every_n_nan_or_inf"))
    incr_ratio, decr_ratio = float(attr(op, "incr_ratio")), float(attr(op, "decr_ratio"))

    def k(grads, scale, good, bad):
        with torch.no_grad():
            if scale.is_cuda or any(g.is_sparse or g.dtype != grads[0].dtype for g in grads):
                quots = [g / scale for g in grads]
                found = _found_by_sums([q.to_dense() if q.is_sparse else q for q in quots])
                update_scaling(found, scale, good, bad, incr_n, decr_n, incr_ratio, decr_ratio)
                return [torch.where(found, 0.0, q) for q in quots], found, scale, good, bad
            # the elementwise_div of each gradient by the [1]-shaped scaling: a true division by its value
            quots = torch._foreach_div(grads, scale.reshape(()))
            bad_step = _found_cpu(quots)
            found = torch.tensor([bad_step], dtype=torch.bool)
            update_scaling(found, scale, good, bad, incr_n, decr_n, incr_ratio, decr_ratio)
            if bad_step:
                torch._foreach_zero_(quots)
            return quots, found, scale, good, bad
    return k
