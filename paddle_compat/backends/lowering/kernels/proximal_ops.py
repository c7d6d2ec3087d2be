"""proximal_gd, proximal_adagrad (Paddle 1.8's proximal, L1/L2-regularised updates) and dgc_momentum, as
Paddle's CPU kernels compute them. The parameter (and the adagrad moment) update in place (ParamOut is Param in
Paddle's programs, what fluid.optimizer.ProximalGD / ProximalAdagrad build). Each kernel is made by
optimizer_ops.update (no autograd, the Hogwild lock policy)."""

import torch

from ....ops.registry import OutMeta, attr, defop
from .optimizer_ops import update


def _same(*pairs):
    def infer(ins, attrs):
        return {out: OutMeta(ins[slot][0].shape, ins[slot][0].dtype, ins[slot][0].lod_level) for slot, out in pairs}
    return infer


def _dense(g):
    return g.to_dense() if g.is_sparse else g


def _shrink(prox, lr, l1, l2):
    """sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2); without l1, prox / (1 + lr * l2)."""
    if l1 > 0:
        return torch.sign(prox) * (torch.clamp(prox.abs() - lr * l1, min=0) / (1 + lr * l2))
    return prox / (1 + lr * l2)


@defop("proximal_gd", inputs=("Param", "Grad", "LearningRate"), outputs=("ParamOut",),
       infer_shape=_same(("Param", "ParamOut")), differentiable=False)
def proximal_gd(op, ctx):
    l1, l2 = float(attr(op, "l1", 0.0)), float(attr(op, "l2", 0.0))

    def k(p, g, lr):
        return p.copy_(_shrink(p - lr * _dense(g), lr, l1, l2))
    return update(k, op, ctx, state_of=None)     # like sgd: the parameter is its only state


@defop("proximal_adagrad", inputs=("Param", "Moment", "Grad", "LearningRate"), outputs=("ParamOut", "MomentOut"),
       infer_shape=_same(("Param", "ParamOut"), ("Moment", "MomentOut")), differentiable=False)
def proximal_adagrad(op, ctx):
    l1, l2 = float(attr(op, "l1", 0.0)), float(attr(op, "l2", 0.0))

    def k(p, m, g, lr):
        g = _dense(g)
        m.add_(g * g)
        prox = p - lr * g / torch.sqrt(m)
        return p.copy_(_shrink(prox, lr, l1, l2)), m
    return update(k, op, ctx)


# dgc_momentum (DGC's local update, Paddle 1.8.5's CPU op): the gradient is averaged over nranks in place
# (Grad_out); before rampup_begin_step the update is momentum (velocity = mu * velocity + g; param -= lr *
# velocity, or Nesterov's), from it on plain sgd with the averaged gradient (velocity kept).
# tests/data/paddle18/dgc_momentum.json records Paddle's numbers on both sides of the step.
@defop("dgc_momentum", inputs=("current_step", "nranks", "Param", "Grad", "Velocity", "LearningRate"),
       outputs=("Grad_out", "ParamOut", "VelocityOut"),
       infer_shape=_same(("Grad", "Grad_out"), ("Param", "ParamOut"), ("Velocity", "VelocityOut")),
       differentiable=False)
def dgc_momentum(op, ctx):
    mu, nesterov = float(attr(op, "mu")), bool(attr(op, "use_nesterov", False))
    rampup = float(attr(op, "rampup_begin_step", -1.0))

    def k(step, nranks, p, g, v, lr):
        g = _dense(g)
        g.div_(nranks.reshape(-1)[0])
        if rampup >= 0 and float(step.reshape(-1)[0]) < rampup:
            v.mul_(mu).add_(g)
            p.sub_((g + v * mu) * lr if nesterov else v * lr)
        else:
            p.sub_(g * lr)
        return g, p, v
    return update(k, op, ctx)
