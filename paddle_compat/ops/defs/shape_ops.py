"""Shape and layout ops of Paddle 1.8: strided_slice, unstack, expand_as, crop(_tensor), pad2d,
pad_constant_like, space_to_depth, pixel_shuffle, shuffle_channel, temporal_shift, unfold, affine_channel,
maxout."""

from ...ir.lazy import torch, F
from ..registry import OutMeta, attr, defop
from ..shapes import first, same_as
from .init_ops import device_constant


def _dim(n):
    return n if n is not None and n >= 0 else -1


def _strided_shape(ins, attrs):
    x = first(ins, "Input")
    shape = list(x.shape)
    for ax, s, e, st in zip(attrs["axes"], attrs["starts"], attrs["ends"], attrs["strides"]):
        n = shape[ax]
        if n < 0:
            continue
        shape[ax] = len(range(*slice(s, e, st).indices(n)))
    dec = set(attrs.get("decrease_axis") or [])
    if dec:   # dims an integer index selected (x[0]) are dropped; none left gives [1]
        shape = [d for i, d in enumerate(shape) if i not in dec] or [1]
    return {"Out": OutMeta(shape, x.dtype)}


@defop("strided_slice", inputs=("Input",), infer_shape=_strided_shape)
def strided_slice(op, ctx):
    axes, starts, ends, strides = (list(attr(op, k)) for k in ("axes", "starts", "ends", "strides"))
    decrease = set(attr(op, "decrease_axis", []) or [])

    def k(x):
        idx = [slice(None)] * x.dim()
        for ax, s, e, st in zip(axes, starts, ends, strides):
            r = range(*slice(s, e, st).indices(x.shape[ax]))
            if st > 0:
                idx[ax] = slice(r.start, r.stop, st)
            else:   # torch has no negative steps: take the indices explicitly (made on the device: no upload)
                idx[ax] = torch.arange(r.start, r.stop, r.step, dtype=torch.long, device=x.device)
        out = x
        for ax, ix in enumerate(idx):
            if isinstance(ix, slice):
                out = out[(slice(None),) * ax + (ix,)]
            else:
                out = out.index_select(ax, ix)
        if decrease:
            out = out.reshape([d for i, d in enumerate(out.shape) if i not in decrease] or [1])
        return out
    return k


def _unstack_shape(ins, attrs):
    x = first(ins, "X")
    ax = attrs["axis"] % len(x.shape)
    shape = [s for i, s in enumerate(x.shape) if i != ax]
    return {"Y": [OutMeta(shape, x.dtype) for _ in range(attrs["num"])]}


@defop("unstack", outputs=("Y*",), infer_shape=_unstack_shape)
def unstack(op, ctx):
    axis = attr(op, "axis", 0)
    return lambda x: list(torch.unbind(x, axis))


def _expand_as_shape(ins, attrs):
    x, t = first(ins, "X"), first(ins, "target_tensor")
    return {"Out": OutMeta(t.shape, x.dtype)}


@defop("expand_as", inputs=("X", "target_tensor"), infer_shape=_expand_as_shape, no_grad=("target_tensor",))
def expand_as(op, ctx):
    def k(x, t):
        reps = [ts // xs for ts, xs in zip(t.shape, x.shape)]
        return x.repeat(reps)
    return k


def _crop_shape(slot):
    def infer(ins, attrs):
        x, y = first(ins, "X"), first(ins, slot)
        if y is not None:
            return {"Out": OutMeta(y.shape, x.dtype)}
        shape = [xs - o if s == -1 and xs >= 0 else s
                 for s, xs, o in zip(attrs["shape"], x.shape, attrs.get("offsets") or [0] * len(x.shape))]
        return {"Out": OutMeta(shape, x.dtype)}
    return infer


def _crop(x, shape, offsets):
    idx = tuple(slice(o, o + (xs - o if s == -1 else s)) for s, o, xs in zip(shape, offsets, x.shape))
    return x[idx]


@defop("crop", inputs=("X", "Y"), infer_shape=_crop_shape("Y"), no_grad=("Y",))
def crop(op, ctx):
    shape, offsets = attr(op, "shape"), attr(op, "offsets")

    def k(x, y):
        offs = list(offsets) if offsets else [0] * x.dim()
        return _crop(x, list(y.shape) if y is not None else list(shape), offs)
    return k


def _crop_tensor_shape(ins, attrs):
    x = first(ins, "X")
    if "Shape" in ins:                          # the whole shape comes at run time
        return {"Out": OutMeta([-1] * len(x.shape), x.dtype)}
    shape, offsets = list(attrs["shape"]), list(attrs.get("offsets") or [0] * len(x.shape))
    out = []
    for s, xs, o in zip(shape, x.shape, offsets):
        if s == 0 or (s == -1 and (xs < 0 or o < 0 or "Offsets" in ins)):
            out.append(-1)                      # a run-time size, or x's size less a run-time offset
        else:
            out.append(xs - o if s == -1 else s)
    return {"Out": OutMeta(out, x.dtype)}


def _ints(t):
    return [int(v) for v in t.reshape(-1).tolist()]


# shape/offsets: the attrs, where given as Variables overridden at run time by Shape/Offsets (one [rank] tensor)
# or ShapeTensor/OffsetsTensor (one [1] tensor per dimension).
@defop("crop_tensor", inputs=("X", "Shape", "Offsets", "ShapeTensor*", "OffsetsTensor*"),
       infer_shape=_crop_tensor_shape, no_grad=("Shape", "Offsets", "ShapeTensor", "OffsetsTensor"),
       host_inputs=("Shape", "Offsets"))
def crop_tensor(op, ctx):
    shape_attr, offsets_attr = list(attr(op, "shape")), attr(op, "offsets")

    def k(x, shape_t, offsets_t, shape_ts, offsets_ts):
        shape = _ints(shape_t) if shape_t is not None else \
            [v for t in shape_ts for v in _ints(t)] if shape_ts else shape_attr
        offsets = _ints(offsets_t) if offsets_t is not None else \
            [v for t in offsets_ts for v in _ints(t)] if offsets_ts else \
            (list(offsets_attr) if offsets_attr else [0] * x.dim())
        if len(shape) != x.dim() or len(offsets) != x.dim():
            raise ValueError("crop_tensor: X=%s is %d-D but shape %s / offsets %s"
                             % (op.input("X")[0], x.dim(), shape, offsets))
        for s, o, xs in zip(shape, offsets, x.shape):
            if o < 0 or (s != -1 and (s <= 0 or o + s > xs)) or o > xs:
                raise ValueError("crop_tensor: shape %s at offsets %s does not fit X=%s of shape %s"
                                 % (shape, offsets, op.input("X")[0], list(x.shape)))
        return _crop(x, shape, offsets)
    return k


def _pad2d_shape(ins, attrs):
    x = first(ins, "X")
    t, b, l, r = attrs["paddings"]
    shape = list(x.shape)
    hi, wi = (2, 3) if attrs.get("data_format", "NCHW") == "NCHW" else (1, 2)
    shape[hi] = shape[hi] + t + b if shape[hi] >= 0 else -1
    shape[wi] = shape[wi] + l + r if shape[wi] >= 0 else -1
    return {"Out": OutMeta(shape, x.dtype)}


@defop("pad2d", infer_shape=_pad2d_shape)
def pad2d(op, ctx):
    t, b, l, r = attr(op, "paddings")
    mode, value, nhwc = attr(op, "mode", "constant"), float(attr(op, "pad_value", 0.0)), \
        attr(op, "data_format", "NCHW") == "NHWC"
    tmode = {"constant": "constant", "reflect": "reflect", "edge": "replicate"}[mode]

    def k(x):
        if nhwc:
            x = x.permute(0, 3, 1, 2)
        out = F.pad(x, [l, r, t, b], mode=tmode, value=value) if tmode == "constant" else \
            F.pad(x, [l, r, t, b], mode=tmode)
        return out.permute(0, 2, 3, 1) if nhwc else out
    return k


@defop("pad_constant_like", inputs=("X", "Y"), infer_shape=same_as("X"), no_grad=("X",))
def pad_constant_like(op, ctx):
    v = float(attr(op, "pad_value", 0.0))

    def k(x, y):
        pads = []
        for xs, ys in reversed(list(zip(x.shape, y.shape))):
            pads += [0, xs - ys]
        return F.pad(y, pads, value=v)
    return k


def _s2d_shape(ins, attrs):
    x = first(ins, "X")
    b = attrs["blocksize"]
    n, c, h, w = x.shape
    return {"Out": OutMeta((n, c * b * b if c >= 0 else -1, h // b if h >= 0 else -1, w // b if w >= 0 else -1),
                           x.dtype)}


@defop("space_to_depth", infer_shape=_s2d_shape)
def space_to_depth(op, ctx):
    bs = attr(op, "blocksize")

    def k(x):
        # Paddle's kernel writes out.flat[dst(i)] = x.flat[i] with the index arithmetic of its functor, run
        # over the *input* dims with out_c = C / blocksize^2 (not torch's pixel_unshuffle order).
        n, c, h, w = x.shape
        oc = c // (bs * bs)
        i = torch.arange(x.numel(), device=x.device)
        b_ = i // (c * h * w)
        kk = (i % (c * h * w)) // (h * w)
        j = (i % (h * w)) // w
        ii = i % w
        off = kk // oc
        w2 = ii * bs + off % bs
        h2 = j * bs + off // bs
        dst = w2 + w * bs * (h2 + h * bs * (kk % oc + oc * b_))
        flat = x.reshape(-1)
        out = torch.zeros_like(flat).index_put((dst,), flat)
        return out.reshape(n, c * bs * bs, h // bs, w // bs)
    return k


def _ps_shape(ins, attrs):
    x = first(ins, "X")
    r = attrs["upscale_factor"]
    n, c, h, w = x.shape
    return {"Out": OutMeta((n, c // (r * r), h * r if h >= 0 else -1, w * r if w >= 0 else -1), x.dtype)}


@defop("pixel_shuffle", infer_shape=_ps_shape)
def pixel_shuffle(op, ctx):
    r = attr(op, "upscale_factor")
    return lambda x: F.pixel_shuffle(x, r)


@defop("shuffle_channel", infer_shape=same_as("X"))
def shuffle_channel(op, ctx):
    g = attr(op, "group")

    def shuffle(x, groups):
        n, c, h, w = x.shape
        return x.reshape(n, groups, c // groups, h, w).transpose(1, 2).reshape(n, c, h, w)

    def k(x):
        # Paddle 1.8's shuffle_channel_grad applies the forward shuffle (group g) to Out@GRAD instead of its
        # inverse; we match it: the value is shuffle(x, g), the gradient flows through shuffle(x, C / g).
        st = shuffle(x, x.shape[1] // g)
        return shuffle(x, g).detach() + st - st.detach()
    return k


@defop("temporal_shift", infer_shape=same_as("X"))
def temporal_shift(op, ctx):
    seg, ratio = attr(op, "seg_num"), float(attr(op, "shift_ratio", 0.25))

    def k(x):
        nt, c, h, w = x.shape
        v = x.reshape(nt // seg, seg, c, h, w)
        c1, c2 = int(c * ratio), int(c * 2 * ratio)
        z = torch.zeros_like(v[:, :1])
        back = torch.cat([z[:, :, :c1], v[:, :-1, :c1]], 1)           # channel < c1: from t - 1
        fwd = torch.cat([v[:, 1:, c1:c2], z[:, :, c1:c2]], 1)         # c1 <= channel < c2: from t + 1
        return torch.cat([back, fwd, v[:, :, c2:]], 2).reshape(nt, c, h, w)
    return k


def _unfold_shape(ins, attrs):
    x = first(ins, "X")
    (kh, kw), (sh, sw), (pt, pl, pb, pr), (dh, dw) = (attrs[k] for k in ("kernel_sizes", "strides", "paddings",
                                                                         "dilations"))
    n, c, h, w = x.shape
    if h < 0 or w < 0:
        length = -1
    else:
        oh = (h + pt + pb - (dh * (kh - 1) + 1)) // sh + 1
        ow = (w + pl + pr - (dw * (kw - 1) + 1)) // sw + 1
        length = oh * ow
    return {"Y": OutMeta((n, c * kh * kw if c >= 0 else -1, length), x.dtype)}


@defop("unfold", outputs=("Y",), infer_shape=_unfold_shape)
def unfold(op, ctx):
    ks, st, (pt, pl, pb, pr), dl = (attr(op, k) for k in ("kernel_sizes", "strides", "paddings", "dilations"))
    # Paddle's paddings are [top, left, bottom, right]; F.unfold pads symmetrically, so pad first.
    return lambda x: F.unfold(F.pad(x, [pl, pr, pt, pb]), list(ks), dilation=list(dl), stride=list(st))


@defop("affine_channel", inputs=("X", "Scale", "Bias"), infer_shape=same_as("X"))
def affine_channel(op, ctx):
    nhwc = attr(op, "data_layout", "NCHW") == "NHWC"

    def k(x, scale, bias):
        shape = [1] * x.dim()
        shape[-1 if nhwc else 1] = -1
        return x * scale.reshape(shape) + bias.reshape(shape)
    return k


def _maxout_shape(ins, attrs):
    x = first(ins, "X")
    shape = list(x.shape)
    ax = attrs.get("axis", 1)
    shape[ax] = shape[ax] // attrs["groups"] if shape[ax] >= 0 else -1
    return {"Out": OutMeta(shape, x.dtype)}


@defop("maxout", infer_shape=_maxout_shape)
def maxout(op, ctx):
    g, ax = attr(op, "groups"), attr(op, "axis", 1)

    def k(x):
        shape = list(x.shape)
        shape[ax:ax + 1] = [shape[ax] // g, g]
        return x.reshape(shape).max(ax + 1).values
    return k


# shape: the input's dimensions as int32 [rank].
@defop("shape", inputs=("Input",), infer_shape=lambda ins, a: {"Out": OutMeta((len(first(ins, "Input").shape),),
                                                                             "int32")},
       differentiable=False)
def shape(op, ctx):
    # on the input's device (Paddle's kernel wrote CPU memory and moved it on use; our kernels do not move).
    # Off the CPU each shape is uploaded once and copied on the device after that (device_constant)
    made = {}

    def k(x):
        if x.device.type == "cpu":
            return torch.tensor(list(x.shape), dtype=torch.int32)
        return device_constant(made, (tuple(x.shape), x.device),
                               lambda: torch.tensor(list(x.shape), dtype=torch.int32, device=x.device))
    return k

