"""conv2d, pool2d, batch_norm (Paddle's biased running variance), dropout (both implementations), norm,
layer_norm.

The builders of conv2d, batch_norm, layer_norm, dropout and l2_normalize create parameters or
stop-gradient side outputs themselves, in Paddle's order; they ask the shapes below for their outputs.
"""

from ...ir.lazy import F, torch
from ..registry import OutMeta, attr, defop
from ..shapes import first
from .init_ops import generator_for


def _nhwc(op):
    return attr(op, "data_format", attr(op, "data_layout", "NCHW")) == "NHWC"


def conv_out(size, k, s, p, d):
    """One spatial output dim of a convolution (-1 when the input dim is unknown)."""
    if size < 0:
        return -1
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _conv_shape(ins, attrs):
    x, w = first(ins, "Input"), first(ins, "Filter")
    channel_last = attrs.get("data_format", "NCHW") == "NHWC"
    st, pd, dl = attrs.get("strides", [1, 1]), attrs.get("paddings", [0, 0]), attrs.get("dilations", [1, 1])
    hw = x.shape[1:3] if channel_last else x.shape[2:4]
    oh, ow = (conv_out(hw[i], w.shape[2 + i], st[i], pd[i], dl[i]) for i in range(2))
    n, f = x.shape[0], w.shape[0]
    return {"Output": OutMeta([n, oh, ow, f] if channel_last else [n, f, oh, ow], x.dtype)}


@defop(["conv2d", "depthwise_conv2d"], inputs=("Input", "Filter"), outputs=("Output",), infer_shape=_conv_shape)
def conv2d(op, ctx):
    st, pd, dl = list(attr(op, "strides", [1, 1])), list(attr(op, "paddings", [0, 0])), list(attr(op, "dilations", [1, 1]))
    groups = attr(op, "groups", 1) or 1
    nhwc = _nhwc(op)
    if len(pd) == 4:   # [top, bottom, left, right]: torch wants symmetric; pad explicitly otherwise
        if pd[0] == pd[1] and pd[2] == pd[3]:
            pd = [pd[0], pd[2]]
        else:
            raise NotImplementedError("conv2d: asymmetric paddings %s are not supported" % pd)

    def k(x, w):
        if nhwc:
            x = x.permute(0, 3, 1, 2)
        y = F.conv2d(x, w, None, st, pd, dl, groups)
        return y.permute(0, 2, 3, 1) if nhwc else y
    return k


def _pool_shape(ins, attrs):
    x = first(ins, "X")
    channel_last = attrs.get("data_format", "NCHW") == "NHWC"
    ks = list(attrs["ksize"])
    n, c = x.shape[0], (x.shape[3] if channel_last else x.shape[1])
    if attrs.get("adaptive", False):       # ksize is the output size
        oh, ow = ks
    elif attrs.get("global_pooling", False):
        oh = ow = 1
    else:
        st, pd, ceil = attrs.get("strides", [1, 1]), attrs.get("paddings", [0, 0]), attrs.get("ceil_mode", False)
        hw = x.shape[1:3] if channel_last else x.shape[2:4]

        def o(size, k, s, p):
            if size < 0:
                return -1
            return (size - k + 2 * p + (s - 1 if ceil else 0)) // s + 1
        oh, ow = o(hw[0], ks[0], st[0], pd[0]), o(hw[1], ks[1], st[1], pd[1])
    return {"Out": OutMeta([n, oh, ow, c] if channel_last else [n, c, oh, ow], x.dtype)}


@defop("pool2d", infer_shape=_pool_shape)
def pool2d(op, ctx):
    ptype = attr(op, "pooling_type", "max")
    ks, st, pd = list(attr(op, "ksize")), list(attr(op, "strides", [1, 1])), list(attr(op, "paddings", [0, 0]))
    glob, ceil, excl = attr(op, "global_pooling", False), attr(op, "ceil_mode", False), attr(op, "exclusive", True)
    nhwc = _nhwc(op)

    def k(x):
        if nhwc:
            x = x.permute(0, 3, 1, 2)
        if glob:
            y = torch.amax(x, dim=(2, 3), keepdim=True) if ptype == "max" else torch.mean(x, dim=(2, 3), keepdim=True)
        elif attr(op, "adaptive", False):     # adaptive_pool2d: ksize is the output size
            y = F.adaptive_max_pool2d(x, ks) if ptype == "max" else F.adaptive_avg_pool2d(x, ks)
        elif ptype == "max":
            y = F.max_pool2d(x, ks, st, pd, ceil_mode=ceil)
        else:
            y = F.avg_pool2d(x, ks, st, pd, ceil_mode=ceil, count_include_pad=not excl)
        return y.permute(0, 2, 3, 1) if nhwc else y
    return k


def _bn_shape(ins, attrs):
    x, mean, var = first(ins, "X"), first(ins, "Mean"), first(ins, "Variance")
    c = x.shape[1] if attrs.get("data_layout", "NCHW") == "NCHW" else x.shape[-1]
    return {"Y": OutMeta(x.shape, x.dtype, x.lod_level), "MeanOut": OutMeta(mean.shape, mean.dtype),
            "VarianceOut": OutMeta(var.shape, var.dtype), "SavedMean": OutMeta([c], x.dtype),
            "SavedVariance": OutMeta([c], x.dtype)}


@defop("batch_norm", inputs=("X", "Scale", "Bias", "Mean", "Variance"),
       outputs=("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance"), infer_shape=_bn_shape)
def batch_norm(op, ctx):
    momentum, eps = float(attr(op, "momentum", 0.9)), float(attr(op, "epsilon", 1e-5))
    is_test, global_stats = attr(op, "is_test", False), attr(op, "use_global_stats", False)
    nhwc = _nhwc(op)
    scratch = {}    # (device, dtype) -> ([C] buffer for torch's unbiased running-variance update, momentum)

    def k(x, scale, bias, mean, var):
        xc = x.movedim(-1, 1) if nhwc and x.dim() > 2 else x
        if is_test or global_stats:
            y = F.batch_norm(xc, mean, var, scale, bias, False, 0.0, eps)
            saved_mean, saved_inv = mean, torch.rsqrt(var + eps)
        else:
            # One native kernel gives the output, the batch mean and 1/sqrt(biased var + eps) (Paddle's
            # SavedMean / SavedVariance), and updates the running mean in place with Paddle's formula
            # (momentum * mean + (1 - momentum) * batch mean). Its running-variance update uses the unbiased
            # batch variance; Paddle keeps the biased one, so torch's update goes to a zeroed buffer,
            # (1 - momentum) * var * n / (n - 1), and is scaled back by (n - 1) / n here. No second pass
            # over x (a var_mean over N, H, W was a quarter of a ResNet step on the CPU).
            n = xc.numel() // xc.shape[1]
            if n > 1:
                key = (xc.device, var.dtype)
                buf, mom = scratch.get(key) or (None, None)
                if buf is None or buf.shape != var.shape:
                    # momentum as a 0-dim tensor of var's type: a float would be wrapped and cast per call
                    buf, mom = scratch[key] = torch.zeros_like(var), torch.tensor(momentum, dtype=var.dtype)
                else:
                    buf.zero_()
                y, saved_mean, saved_inv = torch.native_batch_norm(xc, scale, bias, mean, buf, True,
                                                                   1.0 - momentum, eps)
                _running_var(var, mom, buf, (n - 1) / n)
            else:
                # one value per channel: Paddle 1.8.5 skips the normalization (Y is X, its gradient passes
                # through, Scale and Bias get none) and leaves the running statistics as they are
                # (train_step.json: bn_single_value_sgd); torch's F.batch_norm would raise
                y, saved_mean, saved_inv = xc, torch.zeros_like(mean), torch.ones_like(var)
        if nhwc and x.dim() > 2:
            y = y.movedim(1, -1)
        return y, mean, var, saved_mean, saved_inv
    return k


def _running_var(var, mom, buf, alpha):
    """var = mom * var + alpha * buf, in place; a no_grad scope only where var could record a graph (it
    costs more than the update of a [C] tensor)."""
    if var.requires_grad:
        with torch.no_grad():
            return _running_var(var.detach(), mom, buf, alpha)
    var.mul_(mom).add_(buf, alpha=alpha)


# Seed: a [1] int32 tensor (a `seed` op's output, which recomputation gives each dropout so that the
# recomputed mask is the forward one); it replaces the fix_seed/seed attributes, as in Paddle.
@defop("dropout", inputs=("X", "Seed"), outputs=("Out", "Mask"), no_grad=("Seed",),
       infer_shape=lambda ins, attrs: {"Out": OutMeta(first(ins, "X").shape, first(ins, "X").dtype,
                                                      first(ins, "X").lod_level),
                                       "Mask": OutMeta(first(ins, "X").shape, "uint8")})
def dropout(op, ctx):
    p = float(attr(op, "dropout_prob", 0.5))
    is_test = attr(op, "is_test", False)
    upscale = attr(op, "dropout_implementation", "downgrade_in_infer") == "upscale_in_train"
    seed = attr(op, "seed", 0) if attr(op, "fix_seed", False) else 0

    def k(x, seed_t=None):
        if is_test:
            return (x if upscale else x * (1.0 - p)), None
        if p == 1.0:
            mask = torch.zeros_like(x, dtype=torch.uint8)
            return x * 0.0, mask
        gen = generator_for(seed if seed_t is None else int(seed_t.reshape(-1)[0]), x.device)
        keep = torch.empty_like(x).uniform_(0.0, 1.0, generator=gen) >= p
        out = x * keep
        if upscale:
            out = out / (1.0 - p)
        return out, keep.to(torch.uint8)
    return k


@defop("norm", outputs=("Out", "Norm"),
       infer_shape=lambda ins, attrs: {"Out": OutMeta(first(ins, "X").shape, first(ins, "X").dtype),
                                       "Norm": OutMeta(first(ins, "X").shape, first(ins, "X").dtype)})
def norm(op, ctx):
    axis, eps = attr(op, "axis", 1), float(attr(op, "epsilon", 1e-10))

    def k(x):
        n = torch.sqrt(torch.sum(x * x, dim=axis, keepdim=True) + eps)
        return x / n, n.detach()
    return k


def _ln_shape(ins, attrs):
    x = first(ins, "X")
    rows = list(x.shape[:attrs.get("begin_norm_axis", 1)])
    return {"Y": OutMeta(x.shape, x.dtype, x.lod_level), "Mean": OutMeta(rows, x.dtype),
            "Variance": OutMeta(rows, x.dtype)}


@defop("layer_norm", inputs=("X", "Scale", "Bias"), outputs=("Y", "Mean", "Variance"), infer_shape=_ln_shape)
def layer_norm(op, ctx):
    begin, eps = attr(op, "begin_norm_axis", 1), float(attr(op, "epsilon", 1e-5))

    def k(x, scale, bias):
        norm_shape = tuple(x.shape[begin:])
        y = F.layer_norm(x, norm_shape, scale.reshape(norm_shape) if scale is not None else None,
                         bias.reshape(norm_shape) if bias is not None else None, eps)
        with torch.no_grad():
            flat = x.reshape(x.shape[:begin].numel() if begin else 1, -1)
            var, mean = torch.var_mean(flat, dim=1, unbiased=False)
        return y, mean, var
    return k
