"""Optimizer ops beyond sgd/momentum/adam/adagrad/rmsprop/adamax: ftrl, decayed_adagrad, adadelta, lamb,
lars_momentum, dpsgd, and ModelAverage's average_accumulates. Formulas follow Paddle 1.8's CPU kernels;
parameters and state update in place (ParamOut is Param in Paddle's programs). Row-sparse gradients are
densified (what Paddle's dense kernels of these ops compute from a SelectedRows gradient).
"""

from ...ir.lazy import torch
from ..registry import attr, defop


def _dense(g):
    return g.to_dense() if g.is_sparse else g


def _no_grad(fn):
    def k(*args):
        with torch.no_grad():
            return fn(*args)
    return k


def _set(dst, value):
    dst.copy_(value)
    return dst


@defop("ftrl", inputs=("Param", "SquaredAccumulator", "LinearAccumulator", "Grad", "LearningRate"),
       outputs=("ParamOut", "SquaredAccumOut", "LinearAccumOut"), differentiable=False)
def ftrl(op, ctx):
    # Paddle adds 1e-10 to l1 and l2 (so the shrink test |linear| > l1 is strict even at l1 = 0)
    l1, l2 = float(attr(op, "l1", 0.0)) + 1e-10, float(attr(op, "l2", 0.0)) + 1e-10
    power = float(attr(op, "lr_power", -0.5))

    def k(p, sq, lin, g, lr):
        g = _dense(g)
        new_sq = sq + g * g
        if power == -0.5:
            a_new, a_old = torch.sqrt(new_sq), torch.sqrt(sq)
        else:
            a_new, a_old = torch.pow(new_sq, -power), torch.pow(sq, -power)
        lin.add_(g - (a_new - a_old) / lr * p)
        x = l1 * torch.sign(lin) - lin
        y = a_new / lr + 2 * l2
        _set(p, torch.where(lin.abs() > l1, x / y, torch.zeros_like(p)))
        sq.copy_(new_sq)
        return p, sq, lin
    return _no_grad(k)


@defop("decayed_adagrad", inputs=("Param", "Grad", "Moment", "LearningRate"), outputs=("ParamOut", "MomentOut"),
       differentiable=False)
def decayed_adagrad(op, ctx):
    decay, eps = float(attr(op, "decay", 0.95)), float(attr(op, "epsilon", 1e-6))

    def k(p, g, m, lr):
        g = _dense(g)
        m.mul_(decay).add_((1 - decay) * g * g)
        p.sub_(lr * g / (torch.sqrt(m) + eps))
        return p, m
    return _no_grad(k)


# Paddle's adadelta takes no learning rate: the step is the ratio of two running RMS values. Its kernel
# evaluates the step lazily (an Eigen expression) after AvgSquaredUpdate has been overwritten in place, so
# the parameter moves by sqrt((E[dx^2]_new + eps) / (E[g^2]_new + eps)) * g, where E[dx^2]_new was built from
# the step computed with the old E[dx^2]. That is what Paddle 1.8.5 trains with; we compute the same.
@defop("adadelta", inputs=("Param", "Grad", "AvgSquaredGrad", "AvgSquaredUpdate"),
       outputs=("ParamOut", "AvgSquaredGradOut", "AvgSquaredUpdateOut"), differentiable=False)
def adadelta(op, ctx):
    rho, eps = float(attr(op, "rho", 0.95)), float(attr(op, "epsilon", 1e-6))

    def k(p, g, asg, asu):
        g = _dense(g)
        asg.mul_(rho).add_((1 - rho) * g * g)
        update = -torch.sqrt((asu + eps) / (asg + eps)) * g
        asu.mul_(rho).add_((1 - rho) * update * update)
        p.sub_(torch.sqrt((asu + eps) / (asg + eps)) * g)
        return p, asg, asu
    return _no_grad(k)


# Paddle 1.8.5's lamb applies no bias correction (Beta1Pow/Beta2Pow are inputs it does not use for the
# step, and nothing advances them): r = m1 / (sqrt(m2) + eps) + weight_decay * p, trust = |p| / |r|.
@defop("lamb", inputs=("Param", "Grad", "LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"),
       outputs=("ParamOut", "Moment1Out", "Moment2Out"), differentiable=False)
def lamb(op, ctx):
    b1, b2 = float(attr(op, "beta1", 0.9)), float(attr(op, "beta2", 0.999))
    eps, wd = float(attr(op, "epsilon", 1e-6)), float(attr(op, "weight_decay", 0.01))

    def k(p, g, lr, m1, m2, b1p, b2p):
        g = _dense(g)
        m1.mul_(b1).add_((1 - b1) * g)
        m2.mul_(b2).add_((1 - b2) * g * g)
        r = m1 / (torch.sqrt(m2) + eps) + wd * p
        p_norm, r_norm = torch.linalg.vector_norm(p), torch.linalg.vector_norm(r)
        trust = torch.where((p_norm > 0) & (r_norm > 0), p_norm / r_norm, torch.ones_like(p_norm))
        p.sub_(lr * trust * r)
        return p, m1, m2
    return _no_grad(k)


@defop("lars_momentum", inputs=("Param", "Grad", "Velocity", "LearningRate"), outputs=("ParamOut", "VelocityOut"),
       differentiable=False)
def lars_momentum(op, ctx):
    mu, coeff = float(attr(op, "mu")), float(attr(op, "lars_coeff", 0.001))
    wd = float(attr(op, "lars_weight_decay", 0.0005))

    def k(p, g, v, lr):
        g = _dense(g)
        p_norm, g_norm = torch.linalg.vector_norm(p), torch.linalg.vector_norm(g)
        # Paddle falls back to the plain learning rate when either norm is zero
        local_lr = torch.where((p_norm > 0) & (g_norm > 0), lr * coeff * p_norm / (g_norm + wd * p_norm), lr)
        v.mul_(mu).add_(local_lr * (g + wd * p))
        p.sub_(v)
        return p, v
    return _no_grad(k)


@defop("dpsgd", inputs=("Param", "Grad", "LearningRate"), outputs=("ParamOut",), differentiable=False)
def dpsgd(op, ctx):
    clip, batch = float(attr(op, "clip", 0.9)), float(attr(op, "batch_size", 0.999))
    sigma, seed = float(attr(op, "sigma", 1e-8)), int(attr(op, "seed", 0) or 0)
    state = {}

    def k(p, g, lr):
        g = _dense(g)
        scale = torch.clamp(torch.linalg.vector_norm(g) / clip, min=1.0)
        # Paddle draws one Gaussian number per step (its own generator, seeded by `seed` or the clock);
        # torch's generator gives other numbers for the same seed, so only sigma = 0 is reproducible.
        if "gen" not in state:
            state["gen"] = torch.Generator(device=p.device)
            state["gen"].manual_seed(seed if seed else torch.seed())
        noise = torch.randn((), generator=state["gen"], device=p.device, dtype=p.dtype) * sigma
        p.sub_(lr * (g / scale + noise / batch))
        return p
    return _no_grad(k)


_MAX_NUM_ACCUMULATES = 16384   # Paddle's kMaxNumAccumulates: fold sum_1 into sum_2 this often (precision)


@defop("average_accumulates",
       inputs=("param", "in_sum_1", "in_sum_2", "in_sum_3", "in_num_accumulates", "in_old_num_accumulates",
               "in_num_updates"),
       outputs=("out_sum_1", "out_sum_2", "out_sum_3", "out_num_accumulates", "out_old_num_accumulates",
                "out_num_updates"), differentiable=False)
def average_accumulates(op, ctx):
    window = float(attr(op, "average_window", 0.0))
    min_w, max_w = int(attr(op, "min_average_window", 10000)), int(attr(op, "max_average_window", 10000))

    def k(param, s1, s2, s3, n_acc, n_old, n_upd):
        # In Paddle's programs every in_* and out_* is the same variable, so its kernel's steps read the
        # values the previous steps wrote: add, fold, then maybe restart the window.
        n_upd.add_(1)
        n_acc.add_(1)
        s1.add_(param)
        fold = (n_upd % _MAX_NUM_ACCUMULATES) == 0
        s2.copy_(torch.where(fold, s2 + s1, s2))
        s1.copy_(torch.where(fold, torch.zeros_like(s1), s1))
        limit = torch.minimum(torch.full_like(n_upd, max_w), (n_upd.to(torch.float64) * window).to(n_upd.dtype))
        restart = (n_acc >= min_w) & (n_acc >= limit)
        s3.copy_(torch.where(restart, s1 + s2, s3))
        s1.copy_(torch.where(restart, torch.zeros_like(s1), s1))
        s2.copy_(torch.where(restart, torch.zeros_like(s2), s2))
        n_old.copy_(torch.where(restart, n_acc, n_old))
        n_acc.copy_(torch.where(restart, torch.zeros_like(n_acc), n_acc))
        return s1, s2, s3, n_acc, n_old, n_upd
    return _no_grad(k)
