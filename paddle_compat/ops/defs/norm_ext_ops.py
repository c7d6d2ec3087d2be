"""data_norm (CTR-style normalisation by accumulated batch statistics) and spectral_norm (weight divided by its
largest singular value, estimated by power iteration)."""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first


def _data_norm_shape(ins, attrs):
    x = first(ins, "X")
    if len(x.shape) != 2:
        raise ValueError("data_norm: input %s must be 2-D [N, C], got shape %s" % (x.name, list(x.shape)))
    c = x.shape[1]
    for slot in ("BatchSize", "BatchSum", "BatchSquareSum", "scale_w", "bias"):
        v = first(ins, slot)
        if v is not None and c >= 0 and tuple(v.shape) != (c,):
            raise ValueError("data_norm: %s=%s has shape %s, need [%d] (the columns of %s)"
                             % (slot, v.name, list(v.shape), c, x.name))
    return {"Y": OutMeta(x.shape, x.dtype, x.lod_level), "Means": OutMeta((c,), x.dtype),
            "Scales": OutMeta((c,), x.dtype)}


# Means = BatchSum / BatchSize, Scales = sqrt(BatchSize / BatchSquareSum), Y = (X - Means) * Scales (then
# * scale_w + bias when enabled). With slot_dim > 0 the columns form slots of slot_dim; a row whose first
# column of a slot is 0 (|x| < 1e-7: "not shown") gets 0 in that slot, forward and backward.
# Paddle's "gradients" of the three statistics are not derivatives but this batch's statistics, which the
# optimizer then folds in: d BatchSize = N, d BatchSum = sum(x), d BatchSquareSum = sum((x - mean)^2) + N * eps;
# per slot (Paddle's slot kernel) they are 1, sum / n, sum((x - mean)^2) / n + n * eps over the n shown rows.
@defop("data_norm", inputs=("X", "BatchSize", "BatchSum", "BatchSquareSum", "scale_w", "bias"),
       outputs=("Y", "Means", "Scales"), infer_shape=_data_norm_shape)
def data_norm(op, ctx):
    eps = float(attr(op, "epsilon", 1e-5))
    slot_dim = int(attr(op, "slot_dim", -1))
    shift = bool(attr(op, "enable_scale_and_shift", False))

    def shown(x):
        if slot_dim <= 0:
            return None
        n, c = x.shape
        if c % slot_dim:
            raise ValueError("data_norm: slot_dim=%d does not divide the %d columns of %s"
                             % (slot_dim, c, op.input("X")[0]))
        first_col = x.detach().reshape(n, c // slot_dim, slot_dim)[:, :, :1]
        keep = (first_col.abs() >= 1e-7).expand(n, c // slot_dim, slot_dim).reshape(n, c)
        return keep.to(x.dtype)

    class _Stats(torch.autograd.Function):
        """Y = (X - mean) * scale, with Paddle's statistics in place of the statistics' gradients."""
        @staticmethod
        def forward(fctx, x, bsize, bsum, bsq):
            means = bsum / bsize
            scales = torch.sqrt(bsize / bsq)
            keep = shown(x)
            y = (x - means) * scales
            if keep is not None:
                y = y * keep
            fctx.save_for_backward(x, means, scales)
            fctx.keep = keep
            return y, means, scales

        @staticmethod
        def backward(fctx, gy, _gm, _gs):
            x, means, scales = fctx.saved_tensors
            keep = fctx.keep
            gx = gy * scales
            dev = (x - means) ** 2
            if keep is None:
                n = float(x.shape[0])
                d_size = torch.full_like(means, n)
                d_sum = x.sum(0)
                d_sq = dev.sum(0) + n * eps
            else:
                gx = gx * keep
                cnt = keep.sum(0)
                safe = cnt.clamp(min=1.0)       # a slot no row shows: statistics 0 (Paddle divides by 0)
                d_size = (cnt > 0).to(x.dtype)
                d_sum = (x * keep).sum(0) / safe
                d_sq = torch.where(cnt > 0, (dev * keep).sum(0) / safe + cnt * eps, torch.zeros_like(cnt))
            return gx, d_size, d_sum, d_sq

    def k(x, bsize, bsum, bsq, scale_w, bias):
        y, means, scales = _Stats.apply(x, bsize, bsum, bsq)
        if shift and scale_w is not None:
            y = y * scale_w + bias
        return y, means, scales
    return k


def _spectral_shape(ins, attrs):
    w = first(ins, "Weight")
    dim = int(attrs.get("dim", 0))
    if not 0 <= dim < len(w.shape):
        raise ValueError("spectral_norm: dim=%d is out of range for Weight=%s of rank %d"
                         % (dim, w.name, len(w.shape)))
    return {"Out": OutMeta(w.shape, w.dtype)}


# sigma = u^T W v after power_iters rounds of v = W^T u / (|W^T u| + eps), u = W v / (|W v| + eps) on W viewed as
# [H, W/H] (dim moved first). U and V are read, not updated (as Paddle's kernel, which works on copies).
# The gradient is Paddle 1.8.5's spectral_norm_grad formula, kept for parity although it is not the derivative
# of W / sigma: dW = dOut * (1 - u v^T * sum(W / sigma)) / sigma (the true one is dOut / sigma -
# sum(dOut * W) / sigma^2 * u v^T). Training scripts tuned on Paddle saw this gradient.
@defop("spectral_norm", inputs=("Weight", "U", "V"), infer_shape=_spectral_shape, no_grad=("U", "V"))
def spectral_norm(op, ctx):
    dim = int(attr(op, "dim", 0))
    iters = int(attr(op, "power_iters", 1))
    eps = float(attr(op, "eps", 1e-12))

    class _Normed(torch.autograd.Function):
        @staticmethod
        def forward(fctx, mat, u, v):
            for _ in range(iters):
                v = mat.t() @ u
                v = v / (v.norm() + eps)
                u = mat @ v
                u = u / (u.norm() + eps)
            sigma = u @ mat @ v
            out = mat / sigma
            fctx.save_for_backward(out, u, v, sigma)
            return out

        @staticmethod
        def backward(fctx, g):
            out, u, v, sigma = fctx.saved_tensors
            return g * (1 - torch.outer(u, v) * out.sum()) / sigma, None, None

    def k(w, u, v):
        perm = [dim] + [i for i in range(w.dim()) if i != dim]
        pshape = [w.shape[i] for i in perm]
        mat = w.permute(perm).reshape(w.shape[dim], -1)
        out = _Normed.apply(mat, u.detach(), v.detach()).reshape(pshape)
        inv = [perm.index(i) for i in range(w.dim())]
        return out.permute(inv).contiguous()
    return k
