"""Normalization, resizing and sampling ops of Paddle 1.8: group_norm, instance_norm, lrn, data_norm (CTR-style
normalisation by accumulated batch statistics), spectral_norm (weight divided by its largest singular value,
estimated by power iteration), bilinear/nearest/trilinear_interp, grid_sampler, affine_grid."""

from ...ir.lazy import F, torch
from ..registry import attr, defop, OutMeta
from ..shapes import first


def _group_norm_shape(ins, attrs):
    x = first(ins, "X")
    g = attrs["groups"]
    return {"Y": OutMeta(x.shape, x.dtype), "Mean": OutMeta((x.shape[0], g), x.dtype),
            "Variance": OutMeta((x.shape[0], g), x.dtype)}


@defop("group_norm", inputs=("X", "Scale", "Bias"), outputs=("Y", "Mean", "Variance"),
       infer_shape=_group_norm_shape)
def group_norm(op, ctx):
    g, eps = attr(op, "groups"), float(attr(op, "epsilon", 1e-5))
    nhwc = attr(op, "data_layout", "NCHW") == "NHWC"

    def k(x, scale, bias):
        xc = x.movedim(-1, 1) if nhwc else x
        n = xc.shape[0]
        v = xc.reshape(n, g, -1)
        mean = v.mean(-1)
        var = v.var(-1, unbiased=False)
        inv = torch.rsqrt(var + eps).unsqueeze(-1)
        xh = (v - mean.unsqueeze(-1)) * inv
        if scale is None:
            # Paddle 1.8's group_norm_grad without Scale leaves out the -mean(dy) term: add it back (the
            # added value is zero, its gradient inv_std * mean(dy)).
            m = v.mean(-1, keepdim=True)
            xh = xh + inv.detach() * (m - m.detach())
        y = xh.reshape(xc.shape)
        shape = [1, -1] + [1] * (xc.dim() - 2)
        if scale is not None:
            y = y * scale.reshape(shape)
        if bias is not None:
            y = y + bias.reshape(shape)
        return (y.movedim(1, -1) if nhwc else y), mean.detach(), var.detach()
    return k


def _instance_norm_shape(ins, attrs):
    x = first(ins, "X")
    nc = x.shape[0] * x.shape[1] if x.shape[0] >= 0 and x.shape[1] >= 0 else -1
    return {"Y": OutMeta(x.shape, x.dtype), "SavedMean": OutMeta((nc,), x.dtype),
            "SavedVariance": OutMeta((nc,), x.dtype)}


@defop("instance_norm", inputs=("X", "Scale", "Bias"), outputs=("Y", "SavedMean", "SavedVariance"),
       infer_shape=_instance_norm_shape)
def instance_norm(op, ctx):
    eps = float(attr(op, "epsilon", 1e-5))

    def k(x, scale, bias):
        v = x.reshape(x.shape[0] * x.shape[1], -1)
        mean = v.mean(-1)
        inv_std = 1.0 / torch.sqrt(v.var(-1, unbiased=False) + eps)    # Paddle saves 1/std
        y = F.instance_norm(x, None, None, scale, bias, True, 0.0, eps)
        return y, mean.detach(), inv_std.detach()
    return k


def _lrn_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(x.shape, x.dtype), "MidOut": OutMeta(x.shape, x.dtype)}


@defop("lrn", outputs=("Out", "MidOut"), infer_shape=_lrn_shape)
def lrn(op, ctx):
    n, kk = attr(op, "n", 5), float(attr(op, "k", 1.0))
    alpha, beta = float(attr(op, "alpha", 1e-4)), float(attr(op, "beta", 0.75))
    nhwc = attr(op, "data_format", "NCHW") == "NHWC"

    def k(x):
        xc = x.movedim(-1, 1) if nhwc else x
        # Paddle: mid = k + alpha * sum over the n-channel window of x^2 (no division by n).
        sq = F.pad((xc * xc).unsqueeze(1), (0, 0, 0, 0, (n - 1) // 2, n - 1 - (n - 1) // 2)).squeeze(1)
        win = sq.unfold(1, n, 1).sum(-1)
        mid = kk + alpha * win
        out = xc * mid.pow(-beta)
        if nhwc:
            out, mid = out.movedim(1, -1), mid.movedim(1, -1)
        return out, mid.detach()
    return k


# ---- interpolation ------------------------------------------------------------------------------------

def _interp_shape(n):
    def infer(ins, attrs):
        x = first(ins, "X")
        last = attrs.get("data_layout", "NCHW") == "NHWC"
        sp = list(x.shape[1:1 + n]) if last else list(x.shape[2:2 + n])
        names = ["out_d", "out_h", "out_w"][3 - n:]
        outs = [attrs.get(k, -1) for k in names]
        scale = attrs.get("scale", 0.0) or 0.0
        if any(o <= 0 for o in outs):
            outs = [int(s * scale) if s >= 0 and scale > 0 else -1 for s in sp]
        if first(ins, "OutSize") is not None:
            outs = [-1] * n
        c = x.shape[-1] if last else x.shape[1]
        shape = [x.shape[0]] + outs + [c] if last else [x.shape[0], c] + outs
        return {"Out": OutMeta(shape, x.dtype)}
    return infer


def _src_coords(in_size, out_size, align_corners, align_mode, device, dtype):
    # Paddle 1.8: ratio (in-1)/(out-1) with align_corners, else in/out; align_mode 0 (half-pixel) shifts by 0.5.
    i = torch.arange(out_size, device=device, dtype=dtype)
    if out_size <= 1:
        return torch.zeros_like(i)
    if align_corners:
        return i * ((in_size - 1) / (out_size - 1))
    ratio = in_size / out_size
    if align_mode == 0:
        return torch.clamp((i + 0.5) * ratio - 0.5, min=0.0)
    return i * ratio


def _linear_axis(x, axis, out_size, align_corners, align_mode):
    in_size = x.shape[axis]
    src = _src_coords(in_size, out_size, align_corners, align_mode, x.device, x.dtype)
    i0 = torch.clamp(src.floor().long(), 0, in_size - 1)
    i1 = torch.clamp(i0 + 1, max=in_size - 1)
    lam = (src - i0.to(x.dtype))
    shape = [1] * x.dim()
    shape[axis] = out_size
    lam = lam.reshape(shape)
    return x.index_select(axis, i0) * (1 - lam) + x.index_select(axis, i1) * lam


def _nearest_axis(x, axis, out_size, align_corners):
    in_size = x.shape[axis]
    i = torch.arange(out_size, device=x.device, dtype=torch.float64)
    if align_corners:
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        idx = torch.floor(i * ratio + 0.5)
    else:
        idx = torch.floor(i * (in_size / out_size))
    return x.index_select(axis, torch.clamp(idx.long(), 0, in_size - 1))


def _interp(n, method):
    def factory(op, ctx):
        names = ["out_d", "out_h", "out_w"][3 - n:]
        outs_attr = [attr(op, k, -1) for k in names]
        scale = float(attr(op, "scale", 0.0) or 0.0)
        ac, am = attr(op, "align_corners", True), attr(op, "align_mode", 1)
        last = attr(op, "data_layout", "NCHW") == "NHWC"

        def k(x, out_size):
            if last:
                x = x.movedim(-1, 1)
            if out_size is not None:
                outs = [int(v) for v in out_size.reshape(-1).tolist()]
            elif all(o > 0 for o in outs_attr):
                outs = outs_attr
            else:
                outs = [int(s * scale) for s in x.shape[2:]]
            y = x
            for i, o in enumerate(outs):
                y = _nearest_axis(y, 2 + i, o, ac) if method == "nearest" else _linear_axis(y, 2 + i, o, ac, am)
            return y.movedim(1, -1) if last else y
        return k
    return factory


# OutSize and a Scale tensor fix the output's size: read on the host (so is SizeTensor, by its name)
defop("bilinear_interp", inputs=("X", "OutSize"), infer_shape=_interp_shape(2), no_grad=("OutSize",),
      host_inputs=("OutSize", "Scale"))(_interp(2, "linear"))
defop("nearest_interp", inputs=("X", "OutSize"), infer_shape=_interp_shape(2), no_grad=("OutSize",),
      host_inputs=("OutSize", "Scale"))(_interp(2, "nearest"))
defop("trilinear_interp", inputs=("X", "OutSize"), infer_shape=_interp_shape(3), no_grad=("OutSize",),
      host_inputs=("OutSize", "Scale"))(_interp(3, "linear"))


def _grid_sampler_shape(ins, attrs):
    x, g = first(ins, "X"), first(ins, "Grid")
    return {"Output": OutMeta((x.shape[0], x.shape[1], g.shape[1], g.shape[2]), x.dtype)}


@defop("grid_sampler", inputs=("X", "Grid"), outputs=("Output",), infer_shape=_grid_sampler_shape)
def grid_sampler(op, ctx):
    # Paddle 1.8: bilinear, zero padding, grid -1/1 at the corner pixels' centres (align_corners=True).
    return lambda x, grid: F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=True)


def _affine_grid_shape(ins, attrs):
    t = first(ins, "Theta")
    shape = attrs.get("output_shape") or [-1, -1, -1, -1]
    return {"Output": OutMeta((t.shape[0], shape[2], shape[3], 2), t.dtype)}


@defop("affine_grid", inputs=("Theta", "OutputShape"), outputs=("Output",), infer_shape=_affine_grid_shape,
       no_grad=("OutputShape",), host="data")
def affine_grid(op, ctx):
    shape = attr(op, "output_shape", None)

    def k(theta, out_shape):
        size = [int(v) for v in out_shape.reshape(-1).tolist()] if out_shape is not None else list(shape)
        return F.affine_grid(theta, size, align_corners=True)
    return k


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
