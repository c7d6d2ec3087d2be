"""The lowering's fused ops: k lookups of one table, each sum-pooled (see backends/lowering/fusion.py), fc's
product and bias add as one addmm (fusion_fc.py), softmax + cross_entropy + mean as one autograd node
(fusion_loss.py), mixed precision's loss-scaling check (fusion_amp.py), and grouped optimizer updates, a run
of momentum or sgd ops over many parameters in one call per step (see backends/lowering/fusion_optim.py).

They exist only inside lowered blocks (no program names them); they are declared, as every op type is, in
paddle_compat/ops/defs/fused.py, and their kernels live here with the backend.

The grouped updates compute what the per-op kernels in optimizer_ops.py compute. On a GPU the dense members
go through torch's _foreach_* kernels (a handful of launches for the whole group instead of two per
parameter); on the CPU torch's foreach ops are a loop over per-tensor kernels anyway, so the group loops itself
and calls the per-op update of each member. A row-sparse gradient (SelectedRows) takes its member's per-op path.
"""

import math

import numpy as np
import torch

from ..fusion import FUSED_TYPE
from ..fusion_amp import FUSED_AMP_CHECK
from ..fusion_fc import FUSED_FC
from ..fusion_loss import FUSED_SOFTMAX_CE_MEAN
from ..fusion_optim import FUSED_MOMENTUM, FUSED_SGD
from ....ops import kernel
from .common import attr
from .optimizer_ops import _dense, momentum_update, sgd_update, update
from ....ops import eigen_reduce
from ....ops.defs.activation_ops import _shift_clip
from ....ops.defs.amp_ops import update_scaling
from ....ops.defs.loss_ops import hard_ce, label_index, pick_label
from ....ops.defs.lookup_table import embed
from ....ops.gemm_layout import column_major


@kernel(FUSED_TYPE)
def fused_lookup_seqpool_sum(op, ctx):
    """k lookups of one table, each sum-pooled: one embedding over all ids, one segment_reduce over all
    sequences, split back per slot (see backends/lowering/fusion.py). Same sums in the same order as
    the separate ops, and the same table gradient rows in the same order."""
    sparse = bool(attr(op, "is_sparse", False))
    names = op.input("Ids")
    table = "the table %s" % op.input("W")[0]

    names_rev = names[::-1]

    def k(ids_list, w, lods):
        # slots go in last to first: the table gradient then lists its rows in the order Paddle's `sum`
        # of the per-lookup gradients does, so a sparse update applies them in the same order
        ids_rev, lods_rev = ids_list[::-1], lods[::-1]
        for name, lod in zip(names_rev, lods_rev):
            if not lod:
                raise ValueError("lookup_table + sequence_pool: ids %s carry no LoD (feed a LoDTensor to a "
                                 "variable declared with lod_level=1)" % name)
        ends = [lod[-1] for lod in lods_rev]
        offsets, sizes = (_host_offsets if ends[0].is_cpu else _device_offsets)(
            ends, [ids.shape[0] for ids in ids_rev], names_rev)
        if all(ids.dim() == 2 for ids in ids_rev):
            all_ids = torch.cat(ids_rev).reshape(-1)
        else:
            all_ids = torch.cat([ids.reshape(-1) for ids in ids_rev])
        if all_ids.dtype != torch.int64:
            all_ids = all_ids.long()
        # (the fusion only takes lookups without padding_idx: backends/lowering/fusion.py)
        emb = embed(all_ids, w, "lookup_table", names, table, sparse=sparse)
        pooled = torch.segment_reduce(emb, "sum", offsets=offsets, axis=0, unsafe=True)
        out_lods = [tuple(lod[:-1]) or None for lod in lods]
        return list(pooled.split_with_sizes(sizes))[::-1], out_lods
    return k


def _rows_error(name, covered, rows):
    return ValueError("sequence_pool: the LoD of %s covers %d rows but the tensor has %d" % (name, covered, rows))


def _host_offsets(ends, rows, names):
    """One offsets tensor over all slots' rows, built on the host from numpy views of CPU offsets (about a
    microsecond a slot; slicing and adding the tensors cost several dispatches a slot)."""
    parts, sizes, base = [], [], 0
    for name, off, n in zip(names, ends, rows):
        o = off.numpy()
        if o[-1] != n:
            raise _rows_error(name, int(o[-1]), n)
        parts.append(o[1:] + base if parts else o)
        sizes.append(len(o) - 1)
        base += n
    return torch.from_numpy(np.concatenate(parts)), sizes


def _device_offsets(ends, rows, names):
    parts, sizes, base = [], [], 0
    for name, off, n in zip(names, ends, rows):
        if int(off[-1]) != n:
            raise _rows_error(name, int(off[-1]), n)
        parts.append(off[1:] + base if parts else off)
        sizes.append(off.numel() - 1)
        base += n
    return torch.cat(parts), sizes


@kernel(FUSED_FC)
def fused_mul_add_bias(op, ctx):
    """mul (x_num_col_dims = y_num_col_dims = 1) then elementwise_add of a bias on the last axis: addmm."""
    addmm, mm = torch.addmm, torch.mm

    def k(x, w, b):
        if x.dim() != 2:      # mul flattens everything after the first dim
            x = x.reshape(x.shape[0], -1)
        if w.dim() == 2 and b.dim() == 1:
            return addmm(b, x, column_major(x, w))      # torch.nn.Linear's layout where faster (gemm_layout.py)
        return mm(x, w.reshape(w.shape[0], -1)) + b
    return k


# ---- softmax + cross_entropy (hard labels) + mean as one autograd node (backends/lowering/fusion_loss.py):
# each part makes the torch calls of its own kernel (activation_ops' clipped softmax, loss_ops' pick_label /
# hard_ce / hard_ce_grad, eigen_reduce's mean in Paddle's summation order) in the same order, so the numbers
# are the three ops' bit for bit.

def _loss_forward(x, lab, ignore):
    """(softmax output, picked, idx, ignored, the mean loss as a [1] tensor)."""
    y = torch.softmax(_shift_clip(x, -1), -1)
    picked, idx, ignored = pick_label(y, lab, ignore)
    # every probability of the clipped softmax is at least exp(-64) / C, no zero in float32 or float64 (it
    # may be in float16): log() is finite there, and hard_ce's clamp of log(0) is left out
    loss = hard_ce(picked, ignored, positive=y.dtype in (torch.float32, torch.float64))
    if eigen_reduce.applies(loss):      # the mean op's value: Paddle's summation order (eigen_reduce.py)
        a = loss.numpy()
        return y, picked, idx, ignored, torch.from_numpy(np.asarray(eigen_reduce._all(a, True), a.dtype).reshape(1))
    return y, picked, idx, ignored, torch.mean(loss, dim=list(range(loss.dim()))).reshape(1)


_LOSS_FN = []


def _loss_function():
    if not _LOSS_FN:
        class SoftmaxCrossEntropyMean(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, lab, ignore):
                y, picked, idx, ignored, out = _loss_forward(x, lab, ignore)
                ctx.save_for_backward(y, picked, idx, ignored)
                return out

            @staticmethod
            def backward(ctx, dout):
                y, picked, idx, ignored = ctx.saved_tensors
                # the unfused ops' -(dout / n) / picked (mean's node, then hard_ce_grad) as (dout / -n) / picked:
                # negation is exact and commutes with rounding (zeros' signs included), and the one [1] value
                # broadcast over the rows divides each as the expanded one did
                d = torch.div(dout / -picked.numel(), picked)
                if ignored is not None:
                    d = d.masked_fill_(ignored, 0.0)
                dy = picked.new_zeros(y.shape).scatter_(-1, idx, d)
                # softmax_grad from the output, (dy - sum(dy * y)) * y, as clipped_softmax's node
                return torch._softmax_backward_data(dy, y, y.dim() - 1, y.dtype), None, None
        _LOSS_FN.append(SoftmaxCrossEntropyMean)
    return _LOSS_FN[0]


@kernel(FUSED_SOFTMAX_CE_MEAN)
def fused_softmax_cross_entropy_mean(op, ctx):
    ignore = int(attr(op, "ignore_index", -100))

    def k(x, label):
        lab = label_index(x, label)
        if x.requires_grad and torch.is_grad_enabled():
            return _loss_function().apply(x, lab, ignore)
        return _loss_forward(x, lab, ignore)[-1]
    return k


def use_foreach(t):
    """Multi-tensor kernels where they are one launch per chunk of tensors (CUDA) and take the learning rate
    as a 0-dim tensor operand (torch >= 2.1); a test may widen it."""
    return t.device.type != "cpu" and _foreach_takes_tensor()


_FOREACH_TENSOR = []


def _foreach_takes_tensor():
    if not _FOREACH_TENSOR:
        try:
            torch._foreach_mul([torch.ones(1)], torch.tensor(2.0))
            _FOREACH_TENSOR.append(True)
        except (TypeError, RuntimeError):
            _FOREACH_TENSOR.append(False)
    return _FOREACH_TENSOR[0]


def _scalar(lr):
    # torch's foreach ops take a 0-dim tensor operand (no host read); the LearningRate variable is [1]
    return lr.reshape(()) if lr.dim() else lr


@kernel(FUSED_MOMENTUM)
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
    return update(k, op, ctx)     # under Hogwild: every member's lock, as momentum takes its own


@kernel(FUSED_SGD)
def fused_sgd_group(op, ctx):
    def k(ps, gs, lr):
        if use_foreach(ps[0]) and not any(g.is_sparse for g in gs):
            torch._foreach_sub_(ps, torch._foreach_mul(gs, _scalar(lr)))
            return ps
        for p, g in zip(ps, gs):
            sgd_update(p, g, lr)
        return ps
    return update(k, op, ctx, state_of=None)


# ---- contrib.mixed_precision's loss-scaling check as one op (backends/lowering/fusion_amp.py)
#
# The fused dynamic loss-scaling check of contrib.mixed_precision (see backends/lowering/fusion_amp.py):
# gradients divided by the loss scaling, the step's finiteness, the scaling update, a bad step's gradients zeroed.
#
# The ops it replaces decide "not finite" when the float32 sum of the per-gradient sums (Paddle's Eigen order on
# the CPU, ops/eigen_reduce.py) is inf or nan. That is so exactly when (a) some quotient is inf or nan (an inf
# or nan summand can never sum back to a finite value), or (b) a partial sum overflows. With every element
# finite, no partial sum in any order can exceed sum_i(max|q_i| * n_i) grown by its rounding, (1 + u)^N for N
# additions; where that bound stays below the dtype's largest value, (b) is impossible and the step is finite
# without taking a single sum. Only otherwise (gradients within a factor of the overflow) are the sums taken,
# as the ops take them. So the decisions, and the quotients (true divisions, as elementwise_div), are the ops'.
#
# On the CPU the decision is read on the host (free there) so a finite step skips the k zeroing wheres. On a
# device nothing is read back (the step stays capturable), and dense gradients of one dtype take a few launches
# in all (_check_on_device): one multi-tensor division, one multi-tensor max |q| per gradient (inf or nan
# where a quotient is), and one masked_fill per gradient to zero a bad step's. That verdict is "some quotient
# is not finite"; it differs from the sums only for finite quotients whose float32 sum passes 3.4e38, and on a
# GPU the sums' order was never Paddle's CPU order anyway. Mixed dtypes or row-sparse gradients take the sums.

def _found_by_sums(quots):
    """The unfused ops' verdict: reduce_sum of each, concat, reduce_sum, isfinite, logical_not."""
    sums = [eigen_reduce.reduce_sum(q, None).reshape(1) for q in quots]
    return ~torch.isfinite(eigen_reduce.reduce_sum(torch.cat(sums), None)).all().reshape(1)


def _check_on_device(grads, scale):
    """(quotients, found) for dense gradients of one dtype, with nothing read on the host (see above)."""
    quots = torch._foreach_div(grads, scale.reshape(()))
    found = ~torch.isfinite(torch.stack(torch._foreach_norm(quots, float("inf")))).all()
    return [q.masked_fill_(found, 0.0) for q in quots], found.reshape(1)


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


@kernel(FUSED_AMP_CHECK)
def fused_amp_unscale_check_update(op, ctx):
    incr_n, decr_n = int(attr(op, "incr_every_n_steps")), int(attr(op, "decr_every_n_nan_or_inf"))
    incr_ratio, decr_ratio = float(attr(op, "incr_ratio")), float(attr(op, "decr_ratio"))

    def k(grads, scale, good, bad):
        with torch.no_grad():
            mixed = any(g.is_sparse or g.dtype != grads[0].dtype for g in grads)
            if scale.device.type != "cpu" and not mixed and use_foreach(scale):
                quots, found = _check_on_device(grads, scale)
                update_scaling(found, scale, good, bad, incr_n, decr_n, incr_ratio, decr_ratio)
                return quots, found, scale, good, bad
            if scale.device.type != "cpu" or mixed:
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
