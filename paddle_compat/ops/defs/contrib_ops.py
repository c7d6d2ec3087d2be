"""fluid.contrib.layers ops: partial_sum and partial_concat (columns [start_index, start_index + length) of
each 2-D input, summed or concatenated; length -1 means to the last column), fused_elemwise_activation and
rank_attention."""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first
from .activation_ops import activation


def _span(width, attrs, op_type):
    start, length = int(attrs.get("start_index", 0)), int(attrs.get("length", -1))
    if start < 0:
        start += width
    end = width if length < 0 else start + length
    if width >= 0 and not 0 <= start < end <= width:
        raise ValueError("%s: start_index=%s, length=%s do not fit inputs of %d columns"
                         % (op_type, attrs.get("start_index", 0), attrs.get("length", -1), width))
    return start, end


def _infer(op_type, concat):
    def infer(ins, attrs):
        xs = ins["X"]
        for x in xs:
            if len(x.shape) != 2 or tuple(x.shape) != tuple(xs[0].shape):
                raise ValueError("%s: inputs must be 2-D and of one shape, got %s"
                                 % (op_type, [list(v.shape) for v in xs]))
        start, end = _span(xs[0].shape[1], attrs, op_type)
        cols = (end - start) * (len(xs) if concat else 1)
        return {"Out": OutMeta((xs[0].shape[0], cols), xs[0].dtype)}
    return infer


@defop("partial_sum", inputs=("X*",), infer_shape=_infer("partial_sum", False))
def partial_sum(op, ctx):
    attrs = {"start_index": attr(op, "start_index", 0), "length": attr(op, "length", -1)}

    def k(xs):
        start, end = _span(xs[0].shape[1], attrs, "partial_sum")
        return torch.stack([x[:, start:end] for x in xs]).sum(0)
    return k


@defop("partial_concat", inputs=("X*",), infer_shape=_infer("partial_concat", True))
def partial_concat(op, ctx):
    attrs = {"start_index": attr(op, "start_index", 0), "length": attr(op, "length", -1)}

    def k(xs):
        start, end = _span(xs[0].shape[1], attrs, "partial_concat")
        return torch.cat([x[:, start:end] for x in xs], 1)
    return k


# fused_elemwise_activation: functor_list [f1, f2]. With a binary f1: Out = f1(X, f2(Y)), IntermediateOut =
# f2(Y); with a unary f1: Out = f1(f2(X, Y)), IntermediateOut = f2(X, Y). Y broadcasts into X from `axis`.
_BINARY = {"elementwise_add": lambda a, b: a + b, "elementwise_mul": lambda a, b: a * b}
_UNARY = ("scale", "relu", "tanh", "sigmoid")     # scale: t * attr scale; the others: activation(name)


def _functors(attrs):
    fl = attrs.get("functor_list")
    if isinstance(fl, str):
        fl = fl.split(",")
    if not isinstance(fl, (list, tuple)) or len(fl) != 2:
        raise ValueError("fused_elemwise_activation: functor_list must name 2 functors, got %r" % (fl,))
    f1, f2 = fl
    if f1 in _BINARY and f2 in _UNARY or f1 in _UNARY and f2 in _BINARY:
        return f1, f2
    raise ValueError("fused_elemwise_activation: functor_list %s is not a binary/unary pair of %s and %s"
                     % (list(fl), sorted(_BINARY), sorted(_UNARY)))


def _fused_infer(ins, attrs):
    x, y = ins["X"][0], ins["Y"][0]
    f1, _ = _functors(attrs)
    inter = y if f1 in _BINARY else x
    return {"Out": OutMeta(x.shape, x.dtype, x.lod_level), "IntermediateOut": OutMeta(inter.shape, x.dtype)}


@defop("fused_elemwise_activation", inputs=("X", "Y"), outputs=("Out", "IntermediateOut"),
       infer_shape=_fused_infer)
def fused_elemwise_activation(op, ctx):
    attrs = dict(op.attrs)
    f1, f2 = _functors(attrs)
    axis, scale = int(attrs.get("axis", -1)), float(attrs.get("scale", 0.0))

    def unary(name, t):
        return t * scale if name == "scale" else activation(name)(t)

    def bcast(x, y):
        if y.dim() == x.dim():
            return y
        start = x.dim() - y.dim() if axis == -1 else axis
        return y.reshape([1] * start + list(y.shape) + [1] * (x.dim() - start - y.dim()))

    def k(x, y):
        if f1 in _BINARY:
            inter = unary(f2, y)
            return _BINARY[f1](x, bcast(x, inter)), inter
        inter = _BINARY[f2](x, bcast(x, y))
        return unary(f1, inter), inter
    return k


# rank_attention: row i of RankOffset [N, 1 + 2 MaxRank] is (rank_i, then (rank_ik, index_ik) per k); ranks are
# 1-based, < 1 (-1) means absent. RankParam [MaxRank^2 D, C] holds MaxRank^2 blocks [D, C]; block
# (rank_i - 1) MaxRank + (rank_ik - 1) maps X[index_ik] [D] for Out[i] = sum over present k of X[index_ik] @ block.
# Paddle 1.8.5 has only a GPU kernel; its RankParam gradient sends neighbour k's part to block
# (rank_i - 1, k), which is this derivative only when rank_ik = k + 1. Ours is autograd's.
def _rank_attention_shape(ins, attrs):
    x, off, p = first(ins, "X"), first(ins, "RankOffset"), first(ins, "RankParam")
    r = int(attrs.get("MaxRank", 3))
    if len(off.shape) != 2 or off.shape[1] != 1 + 2 * r:
        raise ValueError("rank_attention: RankOffset must be [N, 1 + 2 * MaxRank] = [N, %d], got %s"
                         % (1 + 2 * r, list(off.shape)))
    if x.shape[1] >= 0 and p.shape[0] != x.shape[1] * r * r:
        raise ValueError("rank_attention: RankParam must have MaxRank^2 * %d = %d rows, got %s"
                         % (x.shape[1], x.shape[1] * r * r, list(p.shape)))
    return {"Out": OutMeta((x.shape[0], p.shape[1]), x.dtype)}


@defop("rank_attention", inputs=("X", "RankOffset", "RankParam"), infer_shape=_rank_attention_shape,
       no_grad=("RankOffset",))
def rank_attention(op, ctx):
    r = int(attr(op, "MaxRank", 3))

    def k(x, offset, param):
        n, d = x.shape
        off = offset.long()
        lower = off[:, 0:1] - 1                                     # [N, 1]
        faster = off[:, 1::2] - 1                                   # [N, R]
        index = off[:, 2::2]                                        # [N, R]
        valid = (lower >= 0) & (faster >= 0)
        if bool((valid & ((index < 0) | (index >= n))).any()):
            raise ValueError("rank_attention: RankOffset=%s indexes rows outside X=%s's %d"
                             % (op.input("RankOffset")[0], op.input("X")[0], n))
        block = (lower * r + faster).clamp(0, r * r - 1)
        xs = x[index.clamp(0, n - 1)] * valid.unsqueeze(2).to(x.dtype)            # [N, R, D]
        blocks = param.reshape(r * r, d, -1)[block]                                # [N, R, D, C]
        return torch.einsum("nkd,nkdc->nc", xs, blocks)
    return k
