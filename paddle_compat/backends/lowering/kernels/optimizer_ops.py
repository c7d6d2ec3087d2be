"""Optimizer ops, updating parameters and state in place (ParamOut is Param, as Paddle's programs say).

Formulas follow Paddle's CPU kernels (e.g. Adam folds sqrt(1-beta2^t)/(1-beta1^t) into the learning rate and
adds epsilon to sqrt(moment2) unscaled, as 1.8.5 does: tests/unit/test_optimizers_paddle18.py; and takes
1 - beta in the parameter's type). Dense Adam also keeps the kernel's order of float32 operations, so its
moments are bit-identical to Paddle's (tests/unit/test_adam_kernel_paddle18.py); the parameter can differ by
a few ulp where Paddle's vectorized Eigen sqrt (an rsqrt estimate plus a Newton step) rounds off. Row-sparse
gradients (torch sparse COO, Paddle's SelectedRows; see backends/selected_rows.py) follow Paddle's sparse kernels:
  sgd      updates only the gradient's rows, one row entry at a time in the order given (repeats are
           applied one after the other, as Paddle's loop does; no merge);
  adagrad  merges repeated rows, then updates moment and param on those rows only;
  adam     lazy_mode=True: merges, then moments and param of those rows only; lazy_mode=False (Paddle's
           default): every row's moments decay and every row moves (a missing row has gradient 0), which
           is the dense update of the densified gradient; both, as Paddle's CPU kernel, correct the bias with
           beta^(t+1) rather than beta^t (it advances the shared pow accumulators first);
  others   (momentum, rmsprop, adamax) densify, which is what Paddle's sparse variants compute.
Rows not touched stay bit-identical under sgd, adagrad and lazy adam.
Beyond those: ftrl, decayed_adagrad, adadelta, lamb, lars_momentum, dpsgd, proximal_gd, proximal_adagrad,
dgc_momentum and ModelAverage's average_accumulates (Paddle 1.8's CPU kernels; a row-sparse gradient is
densified, which is what Paddle's dense kernels of these ops compute from a SelectedRows gradient). Every kernel is made by `update`: one
no-autograd wrapper and one Hogwild policy for all of them.
"""

import threading

import torch

from ...selected_rows import merge_rows, rows_values
from ....ops import kernel
from .common import attr


def _dense(g):
    return g.to_dense() if g.is_sparse else g


def _no_grad(fn):
    def k(*args):
        if not torch.is_grad_enabled():   # a pserver's optimize step runs under one no_grad already
            return fn(*args)
        with torch.no_grad():
            return fn(*args)
    return k


def _set(dst, value):
    dst.copy_(value)
    return dst


_HOGWILD_LOCKS = {}
_HOGWILD_LOCKS_LOCK = threading.Lock()


def update(fn, op, ctx, state_of="Param"):
    """Every optimizer kernel is made here: the update runs outside autograd, and under Hogwild (several
    threads running one program on shared parameters: lower_block's shared_params) an update that keeps
    state holds the lock of each parameter it updates (state_of: the slot naming them; None for sgd and
    dpsgd, whose only read-modify-write is the parameter itself, which Hogwild leaves lock-free).

    Why: an update reads its state, computes, and writes state and parameter back. Unlocked, one thread's
    step can read a state another thread has half written: Adam's stored first moment came from one
    thread's update and the second from another's that had not seen that gradient, so a row with a first
    moment but a second moment of ~0 stepped by ~lr/epsilon (an embedding table blew up to 1e3-1e4 in about
    1 run in 20 of a 2-thread sparse Adam run). Every update with state divides by it (adam, adamax,
    rmsprop, adagrad, decayed_adagrad, adadelta, lamb, ftrl), scales by it (lars_momentum's norms) or
    accumulates into it (momentum's velocity, ModelAverage's sums and counters), so all of them take the
    lock. Paddle's per-element kernels keep each element's state and parameter together; this does so per
    parameter. Locks are taken in name order (a grouped update holds several), and forward and backward
    stay lock-free."""
    fn = _no_grad(fn)
    if state_of is None or not ctx.shared_params:
        return fn
    with _HOGWILD_LOCKS_LOCK:
        # keyed by the scope's process-unique id (id() of a freed scope comes back for a new one)
        locks = [_HOGWILD_LOCKS.setdefault((getattr(ctx.scope, "_uid", None), name), threading.Lock())
                 for name in sorted(set(op.input(state_of)))]
    if len(locks) == 1:
        lock = locks[0]

        def k(*args):
            with lock:
                return fn(*args)
        return k

    def k_all(*args):
        for lock in locks:
            lock.acquire()
        try:
            return fn(*args)
        finally:
            for lock in reversed(locks):
                lock.release()
    return k_all


@kernel("sgd")
def sgd(op, ctx):
    return update(sgd_update, op, ctx, state_of=None)


def sgd_update(p, g, lr):
    if p.is_sparse:
        return _sgd_rows_param(p, g, lr)
    if g.is_sparse:
        rows, values = rows_values(g)
        return p.index_add_(0, rows, values, alpha=-float(lr))    # p[row] -= lr * g, entry by entry
    # p - lr * g in one pass (a fused multiply-add: it may round the last bit differently from two
    # passes, as Paddle's Eigen kernel itself does when built with FMA); parity tests hold it to Paddle.
    return p.addcmul_(g, lr, value=-1.0)


def _sgd_rows_param(p, g, lr):
    """sgd on a SelectedRows parameter (a table whose rows live in the variable itself): each gradient row
    finds its entry in the parameter's own row list and moves it in place, as Paddle 1.8's sparse-parameter
    kernel does (a gradient row the table lacks is an error there too; rows are not added)."""
    if not g.is_sparse:
        raise TypeError("sgd: Param is a SelectedRows, so Grad must be one too (Paddle's kernel takes no "
                        "dense gradient for a row-sparse parameter)")
    p_rows, p_values = rows_values(p)
    g_rows, g_values = rows_values(g)
    where = {int(r): i for i, r in enumerate(p_rows.tolist())}   # a repeated row: its last entry, as Paddle's index
    missing = [int(r) for r in g_rows.tolist() if int(r) not in where]
    if missing:
        raise ValueError("sgd: gradient rows %s are not in the SelectedRows parameter's rows %s"
                         % (missing[:10], p_rows.tolist()[:10]))
    idx = torch.as_tensor([where[int(r)] for r in g_rows.tolist()], dtype=torch.int64, device=p_values.device)
    p_values.index_add_(0, idx, g_values.to(p_values.dtype), alpha=-float(lr))
    return p


@kernel("momentum")
def momentum(op, ctx):
    mu, nesterov = float(attr(op, "mu")), attr(op, "use_nesterov", False)

    def k(p, g, v, lr):
        g = _dense(g)
        if nesterov:
            v.mul_(mu).add_(g)
            p.sub_((g + v * mu) * lr)
        else:
            momentum_update(p, g, v, lr, mu)
        return p, v
    return update(k, op, ctx)


def momentum_update(p, g, v, lr, mu):
    """v = mu * v + g; p -= lr * v: one kernel each (fused multiply-adds: they may round the last bit
    differently from Paddle's two passes, as sgd's addcmul_ does; the parity tests hold them to Paddle).
    lr stays a tensor: no host read, nothing that would stop a CUDA graph."""
    torch.add(g, v, alpha=mu, out=v)
    p.addcmul_(v, lr, value=-1.0)


@kernel("adam")
def adam(op, ctx):
    b1, b2, eps = float(attr(op, "beta1", 0.9)), float(attr(op, "beta2", 0.999)), float(attr(op, "epsilon", 1e-8))
    in_place_pows = op.input("Beta1Pow") == op.output("Beta1PowOut") if op.output("Beta1PowOut") else False
    lazy = bool(attr(op, "lazy_mode", False))
    # Paddle computes 1 - beta in the parameter's type: for float32, 1 - 0.999f is 0.00099998713, which
    # moves moment2 by 1.3e-5 relative from 1 - 0.999 rounded once
    one_minus = {dt: (_one_minus(b1, dt), _one_minus(b2, dt)) for dt in (torch.float32, torch.float64)}

    # ParamOut / Moment1Out / Moment2Out other than their inputs (op tests build such ops; optimizers
    # never do): the inputs stay as they were, as in Paddle
    apart = [(i, o) for i, o in (("Param", "ParamOut"), ("Moment1", "Moment1Out"), ("Moment2", "Moment2Out"))
             if op.output(o) and op.input(i) != op.output(o)]

    def k(p, g, lr, m1, m2, b1p, b2p, b1_tensor=None, b2_tensor=None):
        if apart:
            p, m1, m2 = _adam_apart_outputs(op, ctx, apart, lazy and g.is_sparse, p, g, m1, m2)
        if b1_tensor is not None or b2_tensor is not None:
            # Paddle's dispensable Beta1Tensor / Beta2Tensor replace the attributes (a beta given as a
            # Variable); they are read each step, so 1 - beta is rounded in the parameter's type here
            return k_betas(p, g, lr, m1, m2, b1p, b2p,
                           float(b1_tensor.reshape(-1)[0]) if b1_tensor is not None else b1,
                           float(b2_tensor.reshape(-1)[0]) if b2_tensor is not None else b2)
        return k_betas(p, g, lr, m1, m2, b1p, b2p, b1, b2, one_minus.get(p.dtype, (1 - b1, 1 - b2)))

    def k_betas(p, g, lr, m1, m2, b1p, b2p, b1, b2, c=None):
        c1, c2 = c if c is not None else (_one_minus(b1, p.dtype), _one_minus(b2, p.dtype))
        sparse = g.is_sparse
        if sparse and in_place_pows:
            # Paddle 1.8.5's CPU kernel for a SelectedRows gradient writes beta^(t+1) into the (shared) pow
            # accumulators before its update reads them: the step uses the next step's bias correction
            b1p.mul_(b1)
            b2p.mul_(b2)
        lr_t = lr * (torch.sqrt(1 - b2p) / (1 - b1p))
        if lazy and sparse:
            _adam_lazy_rows(p, m1, m2, g, lr_t, b1, b2, c1, c2, eps)
        elif sparse and _whole_table_ok(p, m1, m2):
            _adam_rows_and_decay(p, m1, m2, g, lr_t, b1, b2, c1, c2, eps)
        else:
            _adam_dense(p, m1, m2, _dense(g), lr_t, b1, b2, c1, c2, eps)
        if in_place_pows:
            if not sparse:
                b1p.mul_(b1)
                b2p.mul_(b2)
            return p, m1, m2, b1p, b2p
        return p, m1, m2, b1p * b1, b2p * b2
    return update(k, op, ctx)


def _one_minus(beta, dtype):
    """1 - beta computed in dtype (as Paddle's kernel does in the parameter's type), as a Python float."""
    return float((torch.tensor(1, dtype=dtype) - torch.tensor(beta, dtype=dtype)).item())


def _adam_apart_outputs(op, ctx, apart, lazy_rows, p, g, m1, m2):
    """(param, moment1, moment2) for the update to write when some outputs are not their inputs: those
    outputs get the inputs' values (the inputs stay untouched)."""
    ins = {"Param": p, "Moment1": m1, "Moment2": m2}
    if lazy_rows:
        # lazy Adam writes only the gradient's rows: the other rows of an output other than its input
        # keep what that output held (its scope value; the input's rows where it holds nothing of the
        # shape: Paddle would leave that memory uninitialised)
        for i, o in apart:
            ins[i] = _prior_output(ctx, op.output(o)[0], ins[i])
        for i, o in apart:
            ins[i].index_copy_(0, *_rows_of(g, (p, m1, m2)[("Param", "Moment1", "Moment2").index(i)]))
        # the rows then get the update from the inputs' values, which the copy above put in place
    else:
        for i, o in apart:
            ins[i] = ins[i].clone()
    return ins["Param"], ins["Moment1"], ins["Moment2"]


def _adam_lazy_rows(p, m1, m2, g, lr_t, b1, b2, c1, c2, eps):
    """lazy_mode with a row-sparse gradient: the merged gradient's rows of moments and param, no other row."""
    rows, g = merge_rows(g)
    m1_r = m1.index_select(0, rows) * b1 + g * c1
    m2_r = m2.index_select(0, rows) * b2 + g * c2 * g
    m1.index_copy_(0, rows, m1_r)
    m2.index_copy_(0, rows, m2_r)
    p_r = p.index_select(0, rows) - lr_t * (m1_r / (torch.sqrt(m2_r) + eps))
    p.index_copy_(0, rows, p_r)


def _adam_dense(p, m1, m2, g, lr_t, b1, b2, c1, c2, eps):
    # the step divides this update's own moments (as Paddle's per-element kernel does), not the
    # shared tensors, which a Hogwild thread may have half updated (a moment1 with its gradient
    # over a moment2 still without it would divide by ~eps)
    # Paddle's order: beta1 * m1 + (1 - beta1) * g, beta2 * m2 + ((1 - beta2) * g) * g,
    # p - lr_t * (m1 / (sqrt(m2) + eps)); in-place on fresh temporaries (fewer allocations)
    m1_t = torch.mul(m1, b1).add_(torch.mul(g, c1))
    m2_t = torch.mul(m2, b2).add_(torch.mul(g, c2).mul_(g))
    m1.copy_(m1_t)
    m2.copy_(m2_t)
    p.sub_(torch.div(m1_t, torch.sqrt(m2_t).add_(eps)).mul_(lr_t))


# elements per slice of the whole-table pass of non-lazy sparse Adam: its four slices (param, moments, scratch)
# stay in the cache between the pass's seven in-place ops; the pass then costs about one read and one write of
# the table and its moments, as Paddle's per-element loop does (a densified gradient and full-size temporaries
# cost 10x that on a 1M-row table, mostly page faults of fresh 40 MB buffers)
_TABLE_SLICE = 1 << 17


def _prior_output(ctx, name, like):
    """The value an op's output variable holds before the op writes it (a tensor of `like`'s shape, type and
    device), else a copy of `like`."""
    held = ctx.scope.find_var(name) if ctx.scope is not None else None
    v = getattr(held, "value", None)
    if isinstance(v, torch.Tensor) and not v.is_sparse and v.shape == like.shape and v.dtype == like.dtype and \
            v.device == like.device and v is not like:
        return v
    return like.clone()


def _rows_of(g, src):
    """(index, rows of src) for index_copy_: the rows a row-sparse gradient touches, taken from src."""
    rows = torch.unique(g._indices()[0])
    return rows, src.index_select(0, rows)


def _whole_table_ok(p, m1, m2):
    return p.is_contiguous() and m1.is_contiguous() and m2.is_contiguous() and p.dim() >= 1 and \
        p.dtype == m1.dtype == m2.dtype and p.shape == m1.shape == m2.shape


def _adam_rows_and_decay(p, m1, m2, g, lr_t, b1, b2, c1, c2, eps):
    """Paddle 1.8.5's non-lazy Adam with a row-sparse gradient, without densifying it: its CPU kernel walks
    every row; a row of the (merged) gradient gets the dense update, any other row gets its moments decayed
    (beta * m, no gradient term) and the parameter moved by lr_t * m1 / (sqrt(m2) + eps) from them. Here the
    gradient's rows are updated from their old values first (small tensors), the whole table then decays in
    place slice by slice (which also, wrongly, decays the gradient's rows), and the gradient's rows are written
    last. Each element sees Paddle's operations in Paddle's order, so the numbers are the densified update's."""
    # the repeated rows summed in the order given, from zero (Paddle's MergeAdd, and what the densified
    # gradient held; coalesce() may add them in another order)
    rows, inverse = torch.unique(g._indices()[0], sorted=True, return_inverse=True)
    gv = g._values()
    gv = torch.zeros((rows.numel(),) + tuple(gv.shape[1:]), dtype=gv.dtype, device=gv.device).index_add_(
        0, inverse, gv)
    m1_r = torch.mul(m1.index_select(0, rows), b1).add_(torch.mul(gv, c1))
    m2_r = torch.mul(m2.index_select(0, rows), b2).add_(torch.mul(gv, c2).mul_(gv))
    p_r = p.index_select(0, rows).sub_(torch.div(m1_r, torch.sqrt(m2_r).add_(eps)).mul_(lr_t))
    pf, af, bf = p.view(-1), m1.view(-1), m2.view(-1)
    n = pf.numel()
    step = n if p.device.type != "cpu" else _TABLE_SLICE     # a GPU gains nothing from slices but more launches
    scratch = torch.empty(min(n, step), dtype=p.dtype, device=p.device)
    for i in range(0, n, step):
        j = min(n, i + step)
        a, b, t = af[i:j], bf[i:j], scratch[:j - i]
        a.mul_(b1)
        b.mul_(b2)
        torch.sqrt(b, out=t)
        t.add_(eps)
        torch.div(a, t, out=t)
        t.mul_(lr_t)
        pf[i:j].sub_(t)
    m1.index_copy_(0, rows, m1_r)
    m2.index_copy_(0, rows, m2_r)
    p.index_copy_(0, rows, p_r)


@kernel("adagrad")
def adagrad(op, ctx):
    eps = float(attr(op, "epsilon", 1e-6))

    def k(p, g, m, lr):
        if g.is_sparse:
            rows, g = merge_rows(g)
            m_r = m.index_select(0, rows) + g * g
            m.index_copy_(0, rows, m_r)
            p.index_copy_(0, rows, p.index_select(0, rows) - lr * g / (torch.sqrt(m_r) + eps))
            return p, m
        m.add_(g * g)
        p.sub_(lr * g / (torch.sqrt(m) + eps))
        return p, m
    return update(k, op, ctx)


@kernel("rmsprop")
def rmsprop(op, ctx):
    rho, eps = float(attr(op, "decay", 0.95)), float(attr(op, "epsilon", 1e-6))
    mom_c, centered = float(attr(op, "momentum", 0.0)), attr(op, "centered", False)

    def k(p, g, mom, ms, mg, lr):
        g = _dense(g)
        # divides by this update's own accumulators, not the shared ones (see adam)
        ms_t = ms * rho + g * g * (1 - rho)
        ms.copy_(ms_t)
        if centered:
            mg_t = mg * rho + g * (1 - rho)
            mg.copy_(mg_t)
            mom.mul_(mom_c).add_(lr * g / torch.sqrt(ms_t - mg_t * mg_t + eps))
        else:
            mom.mul_(mom_c).add_(lr * g / torch.sqrt(ms_t + eps))
        p.sub_(mom)
        return p, mom, ms, mg
    return update(k, op, ctx)


@kernel("adamax")
def adamax(op, ctx):
    b1, b2, eps = float(attr(op, "beta1", 0.9)), float(attr(op, "beta2", 0.999)), float(attr(op, "epsilon", 1e-8))

    def k(p, g, lr, m, inf, b1p):
        g = _dense(g)
        # divides by this update's own accumulators, not the shared ones (see adam)
        m_t = m * b1 + g * (1 - b1)
        inf_t = torch.maximum(inf * b2 + eps, g.abs())
        m.copy_(m_t)
        inf.copy_(inf_t)
        p.sub_((lr / (1 - b1p)) * m_t / inf_t)
        return p, m, inf
    return update(k, op, ctx)


@kernel("ftrl")
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
    return update(k, op, ctx)


@kernel("decayed_adagrad")
def decayed_adagrad(op, ctx):
    decay, eps = float(attr(op, "decay", 0.95)), float(attr(op, "epsilon", 1e-6))

    def k(p, g, m, lr):
        g = _dense(g)
        m.mul_(decay).add_((1 - decay) * g * g)
        p.sub_(lr * g / (torch.sqrt(m) + eps))
        return p, m
    return update(k, op, ctx)


# Paddle's adadelta takes no learning rate: the step is the ratio of two running RMS values. Its kernel
# evaluates the step lazily (an Eigen expression) after AvgSquaredUpdate has been overwritten in place, so
# the parameter moves by sqrt((E[dx^2]_new + eps) / (E[g^2]_new + eps)) * g, where E[dx^2]_new was built from
# the step computed with the old E[dx^2]. That is what Paddle 1.8.5 trains with; we compute the same. When
# AvgSquaredUpdateOut is another variable (Paddle's op test), the input is not overwritten and the step is the
# one computed with the old E[dx^2].
@kernel("adadelta")
def adadelta(op, ctx):
    rho, eps = float(attr(op, "rho", 0.95)), float(attr(op, "epsilon", 1e-6))
    aliased = list(op.inputs.get("AvgSquaredUpdate", ())) == list(op.outputs.get("AvgSquaredUpdateOut", ()))

    def k(p, g, asg, asu):
        g = _dense(g)
        asg.mul_(rho).add_((1 - rho) * g * g)
        update = -torch.sqrt((asu + eps) / (asg + eps)) * g
        asu.mul_(rho).add_((1 - rho) * update * update)
        p.add_(-torch.sqrt((asu + eps) / (asg + eps)) * g if aliased else update)
        return p, asg, asu
    return update(k, op, ctx)


# Paddle 1.8.5's lamb applies no bias correction (Beta1Pow/Beta2Pow are inputs it does not use for the
# step, and nothing advances them): r = m1 / (sqrt(m2) + eps) + weight_decay * p, trust = |p| / |r|.
@kernel("lamb")
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
    return update(k, op, ctx)


@kernel("lars_momentum")
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
    return update(k, op, ctx)


@kernel("dpsgd")
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
    return update(k, op, ctx, state_of=None)


_MAX_NUM_ACCUMULATES = 16384   # Paddle's kMaxNumAccumulates: fold sum_1 into sum_2 this often (precision)


@kernel("average_accumulates")
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
    return update(k, op, ctx, state_of="param")


# proximal_gd, proximal_adagrad (Paddle 1.8's proximal, L1/L2-regularised updates) and dgc_momentum, as Paddle's
# CPU kernels compute them (declared in ops/defs/optimizers.py). The parameter (and the adagrad moment) update in
# place (ParamOut is Param in Paddle's programs, what fluid.optimizer.ProximalGD / ProximalAdagrad build).
def _shrink(prox, lr, l1, l2):
    """sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2); without l1, prox / (1 + lr * l2)."""
    if l1 > 0:
        return torch.sign(prox) * (torch.clamp(prox.abs() - lr * l1, min=0) / (1 + lr * l2))
    return prox / (1 + lr * l2)


@kernel("proximal_gd")
def proximal_gd(op, ctx):
    l1, l2 = float(attr(op, "l1", 0.0)), float(attr(op, "l2", 0.0))

    def k(p, g, lr):
        return p.copy_(_shrink(p - lr * _dense(g), lr, l1, l2))
    return update(k, op, ctx, state_of=None)     # like sgd: the parameter is its only state


@kernel("proximal_adagrad")
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
@kernel("dgc_momentum")
def dgc_momentum(op, ctx):
    mu, nesterov = float(attr(op, "mu")), bool(attr(op, "use_nesterov", False))
    rampup = float(attr(op, "rampup_begin_step", -1.0))

    def k(step, nranks, p, g, v, lr):
        g = _dense(g)
        g.div_(nranks.reshape(-1)[0])
        if rampup < 0:
            p.sub_(g * lr)
            return g, p, v
        # before the rampup step: momentum; after it: plain SGD (DGC's own update). Chosen on the device,
        # element values as either branch gives them: a step count read back is a sync per step on a GPU
        before = step.reshape(()) < rampup
        v.copy_(torch.where(before, v * mu + g, v))
        p.sub_(torch.where(before, (g + v * mu) * lr if nesterov else v * lr, g * lr))
        return g, p, v
    return update(k, op, ctx)
