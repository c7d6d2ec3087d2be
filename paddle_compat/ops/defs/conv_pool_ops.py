"""Convolution and pooling ops of Paddle 1.8 beyond conv2d/pool2d: conv2d_transpose (and its depthwise
form), conv3d, conv3d_transpose, pool3d, max_pool2d/3d_with_index (adaptive pooling)."""

from ...ir.flags import flag_value
from ...ir.lazy import torch, F
from ..registry import OutMeta, attr, defop
from ..shapes import first
from .nn_ops import cpu_memory_order


def _pads(p, n):
    """Paddle paddings (n symmetric or 2n [before, after] per dim) -> (symmetric list or None, F.pad list)."""
    p = list(p)
    if len(p) == n:
        return p, None
    if all(p[2 * i] == p[2 * i + 1] for i in range(n)):
        return [p[2 * i] for i in range(n)], None
    fpad = []
    for i in reversed(range(n)):
        fpad += [p[2 * i], p[2 * i + 1]]
    return [0] * n, fpad


def _pad_pairs(p, n):
    p = list(p)
    return [(v, v) for v in p] if len(p) == n else [(p[2 * i], p[2 * i + 1]) for i in range(n)]


def _channel_last(op):
    return attr(op, "data_format", "NCHW") in ("NHWC", "NDHWC")


def _conv_shape(n, transpose):
    def infer(ins, attrs):
        x, w = first(ins, "Input"), first(ins, "Filter")
        last = attrs.get("data_format", "NCHW") in ("NHWC", "NDHWC")
        sp = list(x.shape[1:1 + n]) if last else list(x.shape[2:2 + n])
        ks, st, dl = list(w.shape[2:]), attrs["strides"], attrs["dilations"]
        pads = _pad_pairs(attrs["paddings"], n)
        outs = []
        for i in range(n):
            if sp[i] < 0:
                outs.append(-1)
            elif transpose:
                outs.append((sp[i] - 1) * st[i] - sum(pads[i]) + dl[i] * (ks[i] - 1) + 1)
            else:
                outs.append((sp[i] + sum(pads[i]) - (dl[i] * (ks[i] - 1) + 1)) // st[i] + 1)
        if transpose and attrs.get("output_size"):
            outs = list(attrs["output_size"])
        c = w.shape[1] * attrs.get("groups", 1) if transpose else w.shape[0]
        shape = [x.shape[0]] + outs + [c] if last else [x.shape[0], c] + outs
        return {"Output": OutMeta(shape, x.dtype)}
    return infer


def _conv(n, transpose):
    conv = {(2, False): "conv2d", (3, False): "conv3d", (2, True): "conv_transpose2d",
            (3, True): "conv_transpose3d"}[(n, transpose)]

    def factory(op, ctx):
        st, dl, groups = list(attr(op, "strides")), list(attr(op, "dilations")), attr(op, "groups", 1) or 1
        sym, fpad = _pads(attr(op, "paddings"), n)
        last = _channel_last(op)
        out_size = list(attr(op, "output_size", []) or [])
        cl = flag_value("FLAGS_conv_channels_last")

        def k(x, w):
            if last:
                x = x.movedim(-1, 1)
            elif cl and n == 2 and x.device.type == "cpu":
                # conv2d's choice (transposed: 0.61-0.88x from 8x8 up); grouped ones not measured: left as is
                x = cpu_memory_order(x, w, groups, grouped_cl=False)
            fn = getattr(F, conv)
            if not transpose:
                if fpad:
                    x = F.pad(x, fpad)
                y = fn(x, w, None, st, sym, dl, groups)
            else:
                y = fn(x, w, None, st, sym, 0, groups, dl)
                if fpad:   # asymmetric padding: crop the unpadded output
                    pairs = _pad_pairs(attr(op, "paddings"), n)
                    y = y[(slice(None), slice(None)) + tuple(
                        slice(a, y.shape[2 + i] - b) for i, (a, b) in enumerate(pairs))]
                if out_size and list(y.shape[2:]) != out_size:
                    # Paddle's output_size may exceed the computed size by less than the stride: the extra
                    # rows/cols are the transposed conv's output_padding.
                    extra = [o - s for o, s in zip(out_size, y.shape[2:])]
                    if fpad or any(e < 0 or e >= s for e, s in zip(extra, st)):
                        raise ValueError("%s: output_size %s does not fit the input (computed %s, strides %s)"
                                         % (op.type, out_size, list(y.shape[2:]), st))
                    y = fn(x, w, None, st, sym, extra, groups, dl)
            return y.movedim(1, -1) if last else y
        return k
    return factory


defop("conv2d_transpose", inputs=("Input", "Filter"), outputs=("Output",), infer_shape=_conv_shape(2, True))(
    _conv(2, True))
defop("depthwise_conv2d_transpose", inputs=("Input", "Filter"), outputs=("Output",),
      infer_shape=_conv_shape(2, True))(_conv(2, True))
defop("conv3d", inputs=("Input", "Filter"), outputs=("Output",), infer_shape=_conv_shape(3, False))(
    _conv(3, False))
defop("conv3d_transpose", inputs=("Input", "Filter"), outputs=("Output",), infer_shape=_conv_shape(3, True))(
    _conv(3, True))


def _pool_out(size, k, s, p0, p1, ceil):
    if size < 0:
        return -1
    return (size - k + p0 + p1 + (s - 1 if ceil else 0)) // s + 1


def _pool_shape(n, with_mask=False):
    def infer(ins, attrs):
        x = first(ins, "X")
        last = attrs.get("data_format", "NCHW") in ("NHWC", "NDHWC")
        sp = list(x.shape[1:1 + n]) if last else list(x.shape[2:2 + n])
        ks = attrs["ksize"]
        if attrs.get("global_pooling"):
            outs = [1] * n
        elif attrs.get("adaptive"):
            outs = list(ks)
        else:
            pads = _pad_pairs(attrs.get("paddings", [0] * n), n)
            outs = [_pool_out(sp[i], ks[i], attrs["strides"][i], pads[i][0], pads[i][1], attrs.get("ceil_mode"))
                    for i in range(n)]
        c = x.shape[-1] if last else x.shape[1]
        shape = [x.shape[0]] + outs + [c] if last else [x.shape[0], c] + outs
        res = {"Out": OutMeta(shape, x.dtype)}
        if with_mask:
            res["Mask"] = OutMeta(shape, "int32")
        return res
    return infer


@defop("pool3d", infer_shape=_pool_shape(3))
def pool3d(op, ctx):
    ptype, ks = attr(op, "pooling_type", "max"), list(attr(op, "ksize"))
    st = list(attr(op, "strides", [1, 1, 1]))
    glob, ceil, excl = attr(op, "global_pooling", False), attr(op, "ceil_mode", False), attr(op, "exclusive", True)
    adaptive = attr(op, "adaptive", False)
    sym, fpad = _pads(attr(op, "paddings", [0, 0, 0]), 3)
    last = _channel_last(op)

    def k(x):
        if last:
            x = x.movedim(-1, 1)
        if glob:
            y = torch.amax(x, dim=(2, 3, 4), keepdim=True) if ptype == "max" else x.mean(dim=(2, 3, 4), keepdim=True)
        elif adaptive:
            y = F.adaptive_max_pool3d(x, ks) if ptype == "max" else F.adaptive_avg_pool3d(x, ks)
        else:
            if fpad:
                raise NotImplementedError("pool3d: asymmetric paddings %s are not supported"
                                          % (attr(op, "paddings"),))
            if ptype == "max":
                y = F.max_pool3d(x, ks, st, sym, ceil_mode=ceil)
            elif x.device.type == "cpu" and x.dtype in (torch.float16, torch.bfloat16):
                # torch has no float16/bfloat16 avg_pool3d on the CPU (mixed precision's gray pool3d): float32
                # compute, rounded back to the input's precision
                y = F.avg_pool3d(x.float(), ks, st, sym, ceil_mode=ceil, count_include_pad=not excl).to(x.dtype)
            else:
                y = F.avg_pool3d(x, ks, st, sym, ceil_mode=ceil, count_include_pad=not excl)
        return y.movedim(1, -1) if last else y
    return k


def _max_pool_with_index(n):
    def factory(op, ctx):
        ks = list(attr(op, "ksize"))
        adaptive = attr(op, "adaptive", False)
        st, pd = list(attr(op, "strides", [1] * n)), list(attr(op, "paddings", [0] * n))
        glob = attr(op, "global_pooling", False)

        def k(x):
            if glob:
                size = list(x.shape[2:])
                y, idx = getattr(F, "max_pool%dd" % n)(x, size, size, 0, return_indices=True)
            elif adaptive:
                y, idx = getattr(F, "adaptive_max_pool%dd" % n)(x, ks, return_indices=True)
            else:
                y, idx = getattr(F, "max_pool%dd" % n)(x, ks, st, pd, return_indices=True)
            return y, idx.to(torch.int32)
        return k
    return factory


defop("max_pool2d_with_index", outputs=("Out", "Mask"), infer_shape=_pool_shape(2, True))(_max_pool_with_index(2))
defop("max_pool3d_with_index", outputs=("Out", "Mask"), infer_shape=_pool_shape(3, True))(_max_pool_with_index(3))
