"""mul, matmul, elementwise_* with Paddle's axis broadcasting, scale, sum, mean, reductions, clip,
comparisons and logic."""

import math

import numpy as np
import torch

from ...selected_rows import make_rows, merge_rows
from ..registry import register
from .common import attr


@register("mul", inputs=("X", "Y"))
def mul(op, ctx):
    xd, yd = attr(op, "x_num_col_dims", 1), attr(op, "y_num_col_dims", 1)
    mm = torch.mm

    def k(x, y):
        if x.dim() == 2 and y.dim() == 2 and xd == 1 and yd == 1:
            return mm(x, y)
        xs, ys = x.shape, y.shape
        x2 = x.reshape(math.prod(xs[:xd]), math.prod(xs[xd:]))
        y2 = y.reshape(math.prod(ys[:yd]), math.prod(ys[yd:]))
        return mm(x2, y2).reshape(tuple(xs[:xd]) + tuple(ys[yd:]))

    return k


@register("matmul", inputs=("X", "Y"))
def matmul(op, ctx):
    tx, ty, alpha = attr(op, "transpose_X", False), attr(op, "transpose_Y", False), attr(op, "alpha", 1.0)

    def k(x, y):
        if tx:
            x = x.transpose(-1, -2) if x.dim() > 1 else x
        if ty:
            y = y.transpose(-1, -2) if y.dim() > 1 else y
        out = torch.matmul(x, y)
        return out * alpha if alpha != 1.0 else out

    return k


def _aligner(op, ctx):
    """Reshape Y so that its dims line up with X's starting at `axis` (Paddle's elementwise rule)."""
    axis = attr(op, "axis", -1)

    def align(x, y):
        xn, yn = x.dim(), y.dim()
        if axis == -1 or axis == xn - yn:
            return y
        ys = list(y.shape)
        while ys and axis + len(ys) > xn and ys[-1] == 1:
            ys.pop()
        if axis + len(ys) > xn:
            raise ValueError("elementwise: Y%s does not fit X%s at axis %d" % (list(y.shape), list(x.shape), axis))
        return y.reshape([1] * axis + ys + [1] * (xn - axis - len(ys)))

    return align


def _elementwise(fn):
    def factory(op, ctx):
        align = _aligner(op, ctx)
        axis = attr(op, "axis", -1)
        if axis == -1:
            return fn
        return lambda x, y: fn(x, align(x, y))
    return factory


def _floordiv(x, y):
    return torch.div(x, y, rounding_mode="floor")


for _name, _fn in [("elementwise_add", torch.add), ("elementwise_sub", torch.sub), ("elementwise_mul", torch.mul),
                   ("elementwise_div", torch.div), ("elementwise_max", torch.maximum),
                   ("elementwise_min", torch.minimum), ("elementwise_pow", torch.pow),
                   ("elementwise_mod", torch.remainder), ("elementwise_floordiv", _floordiv)]:
    register(_name, inputs=("X", "Y"))(_elementwise(_fn))

for _name, _fn in [("less_than", torch.lt), ("less_equal", torch.le), ("greater_than", torch.gt),
                   ("greater_equal", torch.ge), ("equal", torch.eq), ("not_equal", torch.ne),
                   ("logical_and", torch.logical_and), ("logical_or", torch.logical_or),
                   ("logical_xor", torch.logical_xor)]:
    register(_name, inputs=("X", "Y"))(_elementwise(_fn))


@register("logical_not")
def logical_not(op, ctx):
    return torch.logical_not


@register("scale")
def scale(op, ctx):
    s, b = float(attr(op, "scale", 1.0)), float(attr(op, "bias", 0.0))
    after = attr(op, "bias_after_scale", True)
    inplace = op.input("X") == op.output("Out")
    if inplace and b == 0.0:
        def k(x):
            with torch.no_grad():
                return x.mul_(s)
        return k
    if b == 0.0:
        return lambda x: x * s
    if s == 1.0:
        return lambda x: x + b
    if after:
        return lambda x: x * s + b
    return lambda x: (x + b) * s


@register("sum", inputs=("X*",))
def sum_(op, ctx):
    def k(xs):
        dense = [x for x in xs if not x.is_sparse]
        sparse = [x for x in xs if x.is_sparse]
        if sparse:
            if dense:
                out = dense[0].clone()
                for d in dense[1:]:
                    out = out + d
                for sp in sparse:
                    out = out + sp.to_dense()
                return out
            out = sparse[0]
            for sp in sparse[1:]:
                out = out + sp
            return out
        if len(dense) == 1:
            return dense[0]
        out = dense[0] + dense[1]
        for d in dense[2:]:   # left to right, as Paddle's sum kernel adds
            out = out + d
        return out
    return k


@register("mean")
def mean(op, ctx):
    return lambda x: x.mean().reshape(1)


def _reduce(fn):
    def factory(op, ctx):
        dims = list(attr(op, "dim", [0]))
        keep = attr(op, "keep_dim", False)
        rall = attr(op, "reduce_all", False)

        def k(x):
            if rall:
                out = fn(x, list(range(x.dim())), keep)
                return out if keep else out.reshape(1)
            out = fn(x, dims, keep)
            return out.reshape(1) if out.dim() == 0 else out
        return k
    return factory


def _amax(x, dims, keep):
    return torch.amax(x, dim=dims, keepdim=keep)


def _amin(x, dims, keep):
    return torch.amin(x, dim=dims, keepdim=keep)


def _prod(x, dims, keep):
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, dim=d, keepdim=keep)
    return x


register("reduce_sum")(_reduce(lambda x, d, k: torch.sum(x, dim=d, keepdim=k)))
register("reduce_mean")(_reduce(lambda x, d, k: torch.mean(x, dim=d, keepdim=k)))
register("reduce_max")(_reduce(_amax))
register("reduce_min")(_reduce(_amin))
register("reduce_prod")(_reduce(_prod))


@register("clip")
def clip(op, ctx):
    # Paddle's min/max attrs are float32: 1.8e308 (clamp's default max) becomes inf, 2.2e-308 becomes 0.
    lo, hi = float(np.float32(attr(op, "min"))), float(np.float32(attr(op, "max")))

    def k(x):
        if x.is_sparse:   # row-sparse: merge repeated rows, clip the merged values (Paddle's kernel)
            rows, values = merge_rows(x)
            return make_rows(rows, torch.clamp(values, lo, hi), x.shape[0])
        return torch.clamp(x, lo, hi)
    return k


@register("clip_by_norm")
def clip_by_norm(op, ctx):
    max_norm = float(attr(op, "max_norm"))

    def dense(x):
        norm = torch.sqrt(torch.sum(x * x))
        return torch.where(norm > max_norm, x * (max_norm / norm), x)

    def k(x):
        if x.is_sparse:   # the norm of the merged rows (Paddle's kernel merges first)
            rows, values = merge_rows(x)
            return make_rows(rows, dense(values), x.shape[0])
        return dense(x)
    return k


@register("squared_l2_norm")
def squared_l2_norm(op, ctx):
    return lambda x: torch.sum(x * x).reshape(1)
