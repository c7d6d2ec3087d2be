"""conv2d, pool2d, batch_norm (Paddle's biased running variance), dropout (both implementations), norm,
layer_norm; and the other ops of fluid.layers.nn: one_hot (v1, v2), hash (xxHash64 of each row, Paddle's
feature hashing), filter_by_instag (keep the instances carrying a wanted tag), similarity_focus (greedy
one-per-row-and-column mask) and random_crop.

The builders of conv2d, batch_norm, layer_norm, dropout and l2_normalize create parameters or
stop-gradient side outputs themselves, in Paddle's order; they ask the shapes below for their outputs.
"""

import numpy as np

from ...ir import places
from ...ir.errors import EnforceNotMet
from ...ir.flags import flag_value
from ...ir.lazy import F, torch
from ..registry import attr, defop, OutMeta
from ..shapes import first
from .init_ops import generator_for
from .lookup_table import checked_below


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
    cl = flag_value("FLAGS_conv_channels_last")
    if len(pd) == 4:   # [top, bottom, left, right]: torch wants symmetric; pad explicitly otherwise
        if pd[0] == pd[1] and pd[2] == pd[3]:
            pd = [pd[0], pd[2]]
        else:
            raise NotImplementedError("conv2d: asymmetric paddings %s are not supported" % pd)

    def k(x, w):
        if nhwc:
            x = x.permute(0, 3, 1, 2)
        elif cl and x.device.type == "cpu":
            x = cpu_memory_order(x, w, groups)
        y = F.conv2d(x, w, None, st, pd, dl, groups)
        return y.permute(0, 2, 3, 1) if nhwc else y
    return k


def cpu_memory_order(x, w, groups, grouped_cl=True):
    """x (NCHW) in the memory order torch's CPU (oneDNN) convolution runs fastest, FLAGS_conv_channels_last.
    Only the order: torch's ops downstream keep it, the values and shapes are NCHW's. Measured (forward +
    backward): channels-last is faster from 8x8 images up (0.7-0.9x) and slower below with many channels (512
    channels at 4x4: 1.3x, 2x2: 1.8x; a transposed one, 256 at 4x4: 2.3x), which go back to NCHW; grouped and
    depthwise convolutions are faster channels-last at every size measured (0.54-0.83x, 7x7 to 56x56;
    grouped_cl=False where not measured); a 1x1 convolution runs about as fast either way (0.91-1.05x): it
    keeps its input's order and converts nothing."""
    if groups > 1 and grouped_cl:
        return x.contiguous(memory_format=torch.channels_last)
    if groups == 1 and w.shape[2] * w.shape[3] == 1:
        return x
    return x.contiguous(memory_format=torch.channels_last if groups == 1 and x.shape[2] * x.shape[3] >= 64
                        else torch.contiguous_format)


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
@defop("dropout", inputs=("X", "Seed"), outputs=("Out", "Mask"), no_grad=("Seed",), grad_lod=(("X", "Out@GRAD"),),
       infer_shape=lambda ins, attrs: {"Out": OutMeta(first(ins, "X").shape, first(ins, "X").dtype,
                                                      first(ins, "X").lod_level),
                                       "Mask": OutMeta(first(ins, "X").shape, "uint8")}, random=True)
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
        # drawn in logical (C) order whatever x's memory order (a channels-last activation): the same
        # seed gives the same mask with FLAGS_conv_channels_last on or off
        keep = torch.empty(x.shape, dtype=x.dtype, device=x.device).uniform_(0.0, 1.0, generator=gen) >= p
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


# ---- hash ------------------------------------------------------------------------------------------------

_P1, _P2, _P3, _P4, _P5 = (np.uint64(v) for v in (11400714785074694791, 14029467366897019727,
                                                   1609587929392839161, 9650029242287828579,
                                                   2870177450012600261))
_M = 0xFFFFFFFFFFFFFFFF


def _rotl(v, r):
    return (v << np.uint64(r)) | (v >> np.uint64(64 - r))


def _round(acc, lane):
    return _rotl(acc + lane * _P2, 31) * _P1


def xxh64(data, seed):
    """XXH64 of every row of `data` (uint8 [N, L]) with one seed: uint64 [N]. Rows run together."""
    n, length = data.shape
    with np.errstate(over="ignore"):
        lanes8 = data[:, :length // 8 * 8].copy().view("<u8").astype(np.uint64)   # [N, L // 8]
        s = np.uint64(seed & _M)
        pos = 0
        if length >= 32:
            v = [np.full(n, (int(s) + int(_P1) + int(_P2)) & _M, np.uint64), np.full(n, (int(s) + int(_P2)) & _M,
                                                                                   np.uint64),
                 np.full(n, s, np.uint64), np.full(n, (int(s) - int(_P1)) & _M, np.uint64)]
            while pos + 32 <= length:
                for j in range(4):
                    v[j] = _round(v[j], lanes8[:, pos // 8 + j])
                pos += 32
            h = _rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)
            for j in range(4):
                h = (h ^ _round(np.zeros(n, np.uint64), v[j])) * _P1 + _P4
        else:
            h = np.full(n, (int(s) + int(_P5)) & _M, np.uint64)
        h = h + np.uint64(length)
        while pos + 8 <= length:
            h = _rotl(h ^ _round(np.zeros(n, np.uint64), lanes8[:, pos // 8]), 27) * _P1 + _P4
            pos += 8
        if pos + 4 <= length:
            k = data[:, pos:pos + 4].copy().view("<u4").astype(np.uint64)[:, 0]
            h = _rotl(h ^ (k * _P1), 23) * _P2 + _P3
            pos += 4
        while pos < length:
            h = _rotl(h ^ (data[:, pos].astype(np.uint64) * _P5), 11) * _P1
            pos += 1
        h ^= h >> np.uint64(33)
        h *= _P2
        h ^= h >> np.uint64(29)
        h *= _P3
        h ^= h >> np.uint64(32)
    return h


def _hash_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(tuple(x.shape[:-1]) + (int(attrs.get("num_hash", 1)), 1), x.dtype, x.lod_level)}


# Out[..., i, 0] = XXH64(bytes of the row X[..., :], seed i) % mod_by, in X's integer type.
@defop("hash", infer_shape=_hash_shape, differentiable=False, host="data")
def hash_op(op, ctx):
    num_hash, mod_by = int(attr(op, "num_hash", 1)), int(attr(op, "mod_by", 100000))

    def k(x):
        if x.dtype not in (torch.int32, torch.int64):
            raise TypeError("hash: input %s must be int32 or int64, got %s" % (op.input("X")[0], x.dtype))
        rows = np.ascontiguousarray(x.detach().cpu().numpy().reshape(-1, x.shape[-1]))
        data = rows.view(np.uint8).reshape(rows.shape[0], -1)
        out = np.stack([(xxh64(data, i) % np.uint64(mod_by)).astype(np.int64) for i in range(num_hash)], 1)
        res = torch.from_numpy(out).to(device=x.device, dtype=x.dtype)
        return res.reshape(tuple(x.shape[:-1]) + (num_hash, 1))
    return k


# ---- filter_by_instag -------------------------------------------------------------------------------------

def _filter_shape(ins, attrs):
    x = first(ins, "Ins")
    return {"Out": OutMeta((-1,) + tuple(x.shape[1:]), x.dtype, 1), "LossWeight": OutMeta((-1, 1), "float32"),
            "IndexMap": OutMeta((-1, 3), "int64")}


# Instance i is X's rows i (is_lod=False) or its LoD sequence i; Ins_tag's LoD gives its tags. The instances
# with a tag in Filter_tag are kept, in order: Out (LoD: one sequence per kept instance), LossWeight 1 each,
# IndexMap rows (out start, in start, rows). None kept: Out is one row of out_val_if_empty, LossWeight 0.
@defop("filter_by_instag", inputs=("Ins", "Ins_tag", "Filter_tag"), grad_lod=("Ins",), outputs=("Out", "LossWeight", "IndexMap"),
       lod_in=("Ins", "Ins_tag"), lod_out=("Out",), infer_shape=_filter_shape, no_grad=("Ins_tag", "Filter_tag"),
       host="data")
def filter_by_instag(op, ctx):
    is_lod = bool(attr(op, "is_lod", True))
    empty_val = attr(op, "out_val_if_empty", 0)

    def k(x, tags, wanted, x_lod, tag_lod):
        dev = x.device
        if not tag_lod:
            raise ValueError("filter_by_instag: Ins_tag=%s needs a LoD (the tags of each instance)"
                             % op.input("Ins_tag")[0])
        toff = tag_lod[-1]
        if is_lod:
            if not x_lod:
                raise ValueError("filter_by_instag: is_lod=True but Ins=%s carries no LoD" % op.input("Ins")[0])
            xoff = x_lod[-1]
        else:
            xoff = torch.arange(x.shape[0] + 1, device=dev)
        n_inst = toff.numel() - 1
        if xoff.numel() - 1 != n_inst:
            raise ValueError("filter_by_instag: Ins=%s holds %d instances but Ins_tag=%s tags %d"
                             % (op.input("Ins")[0], xoff.numel() - 1, op.input("Ins_tag")[0], n_inst))
        hit = torch.isin(tags.reshape(-1), wanted.reshape(-1).to(tags.dtype)).to(torch.int64)
        owner = torch.repeat_interleave(torch.arange(n_inst, device=dev), toff[1:] - toff[:-1])
        keep = torch.zeros(n_inst, dtype=torch.int64, device=dev).index_add_(0, owner, hit) > 0
        lens = xoff[1:] - xoff[:-1]
        rows = torch.repeat_interleave(keep, lens)
        if not bool(keep.any()):
            out = torch.full((1,) + tuple(x.shape[1:]), float(empty_val), dtype=x.dtype, device=dev)
            out = out + 0 * x.sum()         # keeps X in the graph: its gradient is 0
            return (out, torch.zeros(1, 1, dtype=torch.float32, device=dev),
                    torch.zeros(1, 3, dtype=torch.int64, device=dev), (torch.tensor([0, 1], device=dev),))
        out = x[rows]
        klen = lens[keep]
        ooff = torch.cat([klen.new_zeros(1), torch.cumsum(klen, 0)])
        imap = torch.stack([ooff[:-1], xoff[:-1][keep], klen], 1).to(torch.int64)
        weight = torch.ones(int(keep.sum()), 1, dtype=torch.float32, device=dev)
        return out, weight, imap, (ooff,)
    return k


# ---- similarity_focus -------------------------------------------------------------------------------------

# For each sample and each index, the [A, B] slice X[n, index] (along `axis`) is scanned from its largest
# value down; a value is picked when neither its row nor its column has one yet. Out is 1 at the picked
# (row, column) positions across the whole `axis` dimension, over all indexes. Ties are broken by position.
@defop("similarity_focus", infer_shape=lambda ins, a: {"Out": OutMeta(first(ins, "X").shape,
                                                                      first(ins, "X").dtype)},
       differentiable=False, host="data")
def similarity_focus(op, ctx):
    axis = int(attr(op, "axis", 1))
    indexes = [int(i) for i in attr(op, "indexes", [])]

    def k(x):
        if x.dim() != 4 or axis not in (1, 2, 3):
            raise ValueError("similarity_focus: input %s must be 4-D and axis 1, 2 or 3 (got shape %s, axis %d)"
                             % (op.input("X")[0], list(x.shape), axis))
        xt = x.detach().movedim(axis, 1)                       # [N, K, A, B]
        if any(not 0 <= i < xt.shape[1] for i in indexes):
            raise ValueError("similarity_focus: indexes %s out of range for dimension %d of size %d"
                             % (indexes, axis, xt.shape[1]))
        m = xt[:, indexes].clone()                             # [N, I, A, B]
        n, ni, a, b = m.shape
        picked = torch.zeros(n, ni, a * b, dtype=torch.bool, device=x.device)
        flat = m.reshape(n, ni, a * b)
        neg = torch.finfo(flat.dtype).min
        for _ in range(min(a, b)):
            j = flat.argmax(2, keepdim=True)                   # [N, I, 1]
            picked.scatter_(2, j, True)
            r, c = j // b, j % b
            cols = torch.arange(a * b, device=x.device).view(1, 1, -1)
            used = (cols // b == r) | (cols % b == c)
            flat = flat.masked_fill(used, neg)
        mask = picked.reshape(n, ni, a, b).any(1, keepdim=True).to(x.dtype)     # [N, 1, A, B]
        return mask.expand(n, xt.shape[1], a, b).movedim(1, axis).contiguous()
    return k


# ---- random_crop ------------------------------------------------------------------------------------------

def _crop_shape(ins, attrs):
    x = first(ins, "X")
    shape = [int(s) for s in attrs["shape"]]
    return {"Out": OutMeta(tuple(x.shape[:len(x.shape) - len(shape)]) + tuple(shape), x.dtype),
            "SeedOut": OutMeta((1,), "int64")}


# Every instance (the leading dimensions) gets its own window of `shape` over the trailing dimensions, at
# offsets drawn uniformly. The draws come from a generator seeded once by startup_seed (or the Seed input's
# value), so a program's crops repeat from run to run of the same Executor; they are not Paddle's numbers.
# SeedOut carries the next seed, as in Paddle. No gradient, as Paddle.
@defop("random_crop", inputs=("X", "Seed"), outputs=("Out", "SeedOut"), infer_shape=_crop_shape,
       differentiable=False, host="generator", random=True)
def random_crop(op, ctx):
    shape = [int(s) for s in attr(op, "shape")]
    startup_seed = int(attr(op, "startup_seed", 0) or 0)
    state = {}

    def k(x, seed):
        nd = len(shape)
        lead, tail = tuple(x.shape[:x.dim() - nd]), tuple(x.shape[x.dim() - nd:])
        if any(c > s or c <= 0 for c, s in zip(shape, tail)):
            raise ValueError("random_crop: crop shape %s does not fit the trailing dimensions %s of %s"
                             % (shape, list(tail), op.input("X")[0]))
        if "gen" not in state:
            s0 = startup_seed
            if seed is not None and seed.numel() and int(seed.reshape(-1)[0]) != 0:
                s0 = int(seed.reshape(-1)[0])
            state["gen"] = torch.Generator().manual_seed(s0 & 0x7FFFFFFFFFFFFFFF)
        gen = state["gen"]
        b = 1
        for s in lead:
            b *= s
        out = x.reshape((b,) + tail)
        for d, (c, s) in enumerate(zip(shape, tail)):
            off = torch.randint(0, s - c + 1, (b,), generator=gen).to(x.device)
            idx = off.view((b,) + (1,) * nd) + torch.arange(c, device=x.device).view(
                (1,) + (1,) * d + (c,) + (1,) * (nd - d - 1))
            idx = idx.expand((b,) + tuple(shape[:d]) + (c,) + tuple(out.shape[d + 2:]))
            out = torch.gather(out, d + 1, idx)
        nxt = torch.randint(1, 2 ** 31 - 1, (1,), generator=gen).to(device=x.device, dtype=torch.int64)
        return out.reshape(lead + tuple(shape)), nxt
    return k


# ---- one_hot (layers.one_hot) and one_hot_v2 (fluid.one_hot) ----------------------------------------------

def _rank_msg(name, rank):
    # Paddle 1.8.5's one_hot (v1) refuses ids of rank < 2 (its InferShape, at build time and again at run time)
    return ("one_hot: Input(input) rank should be at least 2, but received input rank (%d) less than 2 (ids %s; "
            "give them a trailing dim of 1, or use fluid.one_hot)" % (rank, name))


def _one_hot_shape(v2):
    def infer(ins, attrs):
        x = first(ins, "X")
        depth = -1 if first(ins, "depth_tensor") is not None else int(attrs["depth"])
        lead = tuple(x.shape)
        if not v2 and len(lead) == 1:
            raise EnforceNotMet(_rank_msg(x.name, 1))
        if not v2 and lead and lead[-1] == 1:
            lead = lead[:-1]        # layers.one_hot: ids [.., 1] -> [.., depth]
        return {"Out": OutMeta(lead + (depth,), "float32", x.lod_level)}
    return infer


def _one_hot_range_error(name, depth, idx):
    return ValueError("one_hot: ids of %s must be in [0, %d), got range [%d, %d] (set allow_out_of_range=True "
                      "for zero rows)" % (name, depth, int(idx.min()), int(idx.max())))


def _fed_labels(op, block):
    """fed_index: one_hot's ids against its depth (a depth given as a tensor, or allow_out_of_range: none)."""
    depth = op.attrs.get("depth", -1)
    if op.attrs.get("allow_out_of_range") or op.input("depth_tensor") or depth is None or depth <= 0:
        return None
    x = op.input("X")[0]
    return x, depth, lambda values: _one_hot_range_error(x, depth, values)


def _one_hot_kernel(op, v2):
    allow = bool(attr(op, "allow_out_of_range", False))

    def k(x, depth_t):
        depth = int(depth_t.reshape(-1)[0]) if depth_t is not None else int(attr(op, "depth"))
        idx = x.long()
        if not v2 and idx.dim() < 2:
            raise EnforceNotMet(_rank_msg(op.input("X")[0], idx.dim()))
        if not v2 and idx.dim() > 1 and idx.shape[-1] == 1:
            idx = idx.reshape(idx.shape[:-1])
        valid = (idx >= 0) & (idx < depth)
        # (not while a CUDA graph is captured: its replays run no Python. Fed labels are checked on the host
        # before the upload (fed_index); others give zero rows there, as Paddle 1.8.5's GPU kernel did)
        fed_ok = checked_below(x) is not None and checked_below(x) <= depth     # (checked at the feed)
        if not allow and idx.numel() and not fed_ok and not places.capturing(idx.device) and not bool(valid.all()):
            raise _one_hot_range_error(op.input("X")[0], depth, idx)
        out = torch.nn.functional.one_hot(torch.where(valid, idx, torch.zeros_like(idx)), depth)
        return out.to(torch.float32) * valid.unsqueeze(-1)
    return k


# layers.one_hot: ids [.., 1] (or [..]) -> [.., depth]; fluid.one_hot (one_hot_v2): any shape -> shape + [depth].
# Out-of-range ids give zero rows with allow_out_of_range, an error naming the input otherwise.
@defop("one_hot", inputs=("X", "depth_tensor"), infer_shape=_one_hot_shape(False), differentiable=False,
       host_inputs=("depth_tensor",), fed_index=_fed_labels)
def one_hot(op, ctx):
    return _one_hot_kernel(op, False)


@defop("one_hot_v2", inputs=("X", "depth_tensor"), infer_shape=_one_hot_shape(True), differentiable=False,
       host_inputs=("depth_tensor",), fed_index=_fed_labels)
def one_hot_v2(op, ctx):
    return _one_hot_kernel(op, True)
