"""inplace_abn: batch norm fused with an activation (identity, leaky_relu or elu), Paddle 1.8's in-place
activated batch norm. Y is written over X in Paddle; numbers are those of batch_norm followed by the act."""

from ...ir.lazy import torch, F
from ..registry import OutMeta, attr, defop
from ..shapes import first


def _abn_shape(ins, attrs):
    x, m = first(ins, "X"), first(ins, "Mean")
    return {"Y": OutMeta(x.shape, x.dtype, x.lod_level), "MeanOut": OutMeta(m.shape, m.dtype),
            "VarianceOut": OutMeta(m.shape, m.dtype), "SavedMean": OutMeta(m.shape, m.dtype),
            "SavedVariance": OutMeta(m.shape, m.dtype)}


@defop("inplace_abn", inputs=("X", "Scale", "Bias", "Mean", "Variance"),
       outputs=("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance"), infer_shape=_abn_shape,
       no_grad=("Mean", "Variance"))
def inplace_abn(op, ctx):
    momentum, eps = float(attr(op, "momentum", 0.9)), float(attr(op, "epsilon", 1e-5))
    is_test, global_stats = attr(op, "is_test", False), attr(op, "use_global_stats", False)
    nhwc = attr(op, "data_layout", "NCHW") == "NHWC"
    act, alpha = attr(op, "activation", None) or "identity", float(attr(op, "alpha", 1.0))
    if act not in ("identity", "", "leaky_relu", "elu"):
        raise ValueError("inplace_abn: activation must be identity, leaky_relu or elu, got %r" % (act,))

    def k(x, scale, bias, mean, var):
        xc = x.movedim(-1, 1) if nhwc and x.dim() > 2 else x
        if is_test or global_stats:
            y = F.batch_norm(xc, mean, var, scale, bias, False, 0.0, eps)
            saved_mean, saved_inv = mean, torch.rsqrt(var + eps)
            mean_out, var_out = mean, var
        else:
            y = F.batch_norm(xc, None, None, scale, bias, True, 0.0, eps)
            dims = [0] + list(range(2, xc.dim()))
            with torch.no_grad():
                bvar, bmean = torch.var_mean(xc.detach(), dim=dims, unbiased=False)
                # Paddle's running variance averages the biased batch variance.
                mean_out = mean * momentum + bmean * (1.0 - momentum)
                var_out = var * momentum + bvar * (1.0 - momentum)
            saved_mean, saved_inv = bmean, torch.rsqrt(bvar + eps)
        if act == "leaky_relu":
            y = F.leaky_relu(y, alpha)
        elif act == "elu":
            y = F.elu(y, alpha)
        if nhwc and x.dim() > 2:
            y = y.movedim(1, -1)
        return y, mean_out, var_out, saved_mean, saved_inv
    return k
