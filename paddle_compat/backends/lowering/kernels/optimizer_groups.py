"""The lowering's grouped optimizer updates (see backends/lowering/fusion_optim.py): a run of momentum or sgd
ops over many parameters, one call per step.

The numbers are those of the per-op kernels in optimizer_ops.py. On a GPU the dense members go through
torch's _foreach_* kernels (a handful of launches for the whole group instead of two per parameter); on the
CPU torch's foreach ops are a loop over per-tensor kernels anyway, so the group loops itself and calls the
per-op update of each member. A row-sparse gradient (SelectedRows) takes its member's per-op path.
They exist only inside lowered blocks (no program names them), so they live with the backend.
"""

import torch

from ..fusion_optim import FUSED_MOMENTUM, FUSED_SGD
from ..registry import register
from .common import attr
from .optimizer_ops import _dense, _no_grad, momentum_update, sgd_update


def use_foreach(t):
    """Multi-tensor kernels where they are one launch per chunk of tensors (CUDA); a test may widen it."""
    return t.is_cuda


def _scalar(lr):
    # torch's foreach ops take a 0-dim tensor operand (no host read); the LearningRate variable is [1]
    return lr.reshape(()) if lr.dim() else lr


@register(FUSED_MOMENTUM, inputs=("Param*", "Grad*", "Velocity*", "LearningRate"),
          outputs=("ParamOut*", "VelocityOut*"))
def fused_momentum_group(op, ctx):
    mu = float(attr(op, "mu"))

    def k(ps, gs, vs, lr):
        if use_foreach(ps[0]) and not any(g.is_sparse for g in gs):
            # Paddle's order: v = v * mu + g, then p = p - lr * v
            torch._foreach_mul_(vs, mu)
            torch._foreach_add_(vs, gs)
            torch._foreach_sub_(ps, torch._foreach_mul(vs, _scalar(lr)))
            return ps, vs
        for p, g, v in zip(ps, gs, vs):
            momentum_update(p, _dense(g), v, lr, mu)
        return ps, vs
    return _no_grad(k)


@register(FUSED_SGD, inputs=("Param*", "Grad*", "LearningRate"), outputs=("ParamOut*",))
def fused_sgd_group(op, ctx):
    def k(ps, gs, lr):
        if use_foreach(ps[0]) and not any(g.is_sparse for g in gs):
            torch._foreach_sub_(ps, torch._foreach_mul(gs, _scalar(lr)))
            return ps
        for p, g in zip(ps, gs):
            sgd_update(p, g, lr)
        return ps
    return _no_grad(k)
