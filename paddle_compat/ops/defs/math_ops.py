"""Math: mul, matmul, elementwise_* with Paddle's axis broadcasting, scale, sum, mean, cumsum, reductions
(reduce_* and reduce_all/any), clip, comparisons and logic, the linear algebra of 1.8's layers (addmm, bmm,
dot, dist, cross, kron, trace, tril_triu, diag, diag_embed, eye, linspace) and the number checks (isinf,
isnan, isfinite, allclose, size)."""

import math
import numpy as np

from .. import eigen_reduce
from ..gemm_layout import column_major
from ...ir.lazy import torch, torch_dtype
from ..registry import attr, defop, OutMeta
from ..shapes import first, reduce_dims, same_as


_SAME = same_as("X")


def _merge_rows(t):
    """A row-sparse tensor (Paddle's SelectedRows, a torch COO tensor) as (unique rows ascending, summed
    values): Paddle's MergeAdd, which its clip kernels apply first."""
    c = t.coalesce()
    return c._indices()[0], c._values()


def _make_rows(rows, values, height):
    return torch.sparse_coo_tensor(rows.reshape(1, -1), values, (int(height),) + tuple(values.shape[1:]),
                                   check_invariants=False, is_coalesced=False)


def _mul_shape(ins, attrs):
    x, y = first(ins, "X"), first(ins, "Y")
    xd, yd = attrs.get("x_num_col_dims", 1), attrs.get("y_num_col_dims", 1)
    return {"Out": OutMeta(tuple(x.shape[:xd]) + tuple(y.shape[yd:]), x.dtype, x.lod_level)}


@defop("mul", inputs=("X", "Y"), infer_shape=_mul_shape, grad_lod=("X",))
def mul(op, ctx):
    xd, yd = attr(op, "x_num_col_dims", 1), attr(op, "y_num_col_dims", 1)
    mm = torch.mm

    def k(x, y):
        if x.dim() == 2 and y.dim() == 2 and xd == 1 and yd == 1:
            return mm(x, column_major(x, y))
        xs, ys = x.shape, y.shape
        x2 = x.reshape(math.prod(xs[:xd]), math.prod(xs[xd:]))
        y2 = y.reshape(math.prod(ys[:yd]), math.prod(ys[yd:]))
        return mm(x2, column_major(x2, y2)).reshape(tuple(xs[:xd]) + tuple(ys[yd:]))

    return k


def _matmul_shape(ins, attrs):
    x, y = first(ins, "X"), first(ins, "Y")
    xs, ys = list(x.shape), list(y.shape)
    if len(xs) == 1:
        xs = [1] + xs
    if len(ys) == 1:
        ys = ys + [1]
    if attrs.get("transpose_X", False):
        xs[-2], xs[-1] = xs[-1], xs[-2]
    if attrs.get("transpose_Y", False):
        ys[-2], ys[-1] = ys[-1], ys[-2]
    if xs[-1] >= 0 and ys[-2] >= 0 and xs[-1] != ys[-2]:
        raise ValueError("matmul: inner dims differ: %s (x=%s) vs %s (y=%s)" % (xs[-1], x.name, ys[-2], y.name))
    batch = xs[:-2] if len(xs) >= len(ys) else ys[:-2]
    shape = batch + [xs[-2], ys[-1]]
    if len(x.shape) == 1:
        shape.pop(-2)
    if len(y.shape) == 1:
        shape.pop(-1)
    return {"Out": OutMeta(shape or [1], x.dtype, x.lod_level)}


@defop("matmul", inputs=("X", "Y"), infer_shape=_matmul_shape)
def matmul(op, ctx):
    tx, ty, alpha = attr(op, "transpose_X", False), attr(op, "transpose_Y", False), attr(op, "alpha", 1.0)

    def k(x, y):
        if tx:
            x = x.transpose(-1, -2) if x.dim() > 1 else x
        if ty:
            y = y.transpose(-1, -2) if y.dim() > 1 else y
        elif x.dim() == 2 and y.dim() == 2:
            y = column_major(x, y)
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
    """fn: a function of (x, y), or the name of a torch function (looked up when the kernel is built)."""
    def factory(op, ctx):
        f = getattr(torch, fn) if isinstance(fn, str) else fn
        if fn == "div":
            f = _div(op, ctx)
        align = _aligner(op, ctx)
        axis = attr(op, "axis", -1)
        if axis == -1:
            return f
        return lambda x, y: f(x, align(x, y))
    return factory


def _is_int_var(ctx, name):
    x = ctx.var(name)
    return x is not None and not torch_dtype(x.dtype).is_floating_point and torch_dtype(x.dtype) != torch.bool


def _div(op, ctx):
    """elementwise_div; between integers it truncates toward zero (Paddle 1.8.5's C++ kernel: an int64
    Variable / 7 gives [0, 1, 2, 0] for [3, 10, 14, -3]), which torch.div would make a float."""
    if _is_int_var(ctx, op.input("X")[0]):
        return lambda a, b: (torch.div(a, b) if a.is_floating_point() or b.is_floating_point()
                             else torch.div(a, b, rounding_mode="trunc"))
    return torch.div


def _floordiv(x, y):
    return torch.div(x, y, rounding_mode="floor")


def _broadcast_shape(dtype=None):
    """The output has the shape of the input of higher rank (X on a tie); arithmetic keeps X's LoD, the
    bool results of comparisons carry none."""
    def infer(ins, attrs):
        x, y = first(ins, "X"), first(ins, "Y")
        shape = x.shape if len(x.shape) >= len(y.shape) else y.shape
        return {"Out": OutMeta(shape, dtype or x.dtype, 0 if dtype else x.lod_level)}
    return infer


# a pserver may run these on its row block of a parameter (distributed fact: row_wise; pow, mod and floordiv
# were never planned so, and stay off)
_ROW_WISE = ("elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div", "elementwise_max",
             "elementwise_min")

_GRAD_LOD = ("elementwise_add", "elementwise_sub", "elementwise_mul")

# floor division and remainder are piecewise constant: no gradient
for _name, _fn in [("elementwise_add", "add"), ("elementwise_sub", "sub"), ("elementwise_mul", "mul"),
                   ("elementwise_div", "div"), ("elementwise_max", "maximum"), ("elementwise_min", "minimum"),
                   ("elementwise_pow", "pow"), ("elementwise_mod", "remainder"), ("elementwise_floordiv", None)]:
    defop(_name, inputs=("X", "Y"), infer_shape=_broadcast_shape(),
          differentiable=_name not in ("elementwise_mod", "elementwise_floordiv"),
          row_wise=_name in _ROW_WISE,
          # X@GRAD takes Out@GRAD's LoD, Y@GRAD Y's (recorded from Paddle 1.8.5, make_grad_lod.py)
          grad_lod=(("X", "Out@GRAD"), "Y") if _name in _GRAD_LOD else ())(
        _elementwise(_floordiv if _fn is None else _fn))

# comparisons and logic: bool outputs, no gradient (their builders take an optional existing output)
for _name, _fn in [("less_than", "lt"), ("less_equal", "le"), ("greater_than", "gt"), ("greater_equal", "ge"),
                   ("equal", "eq"), ("not_equal", "ne"), ("logical_and", "logical_and"),
                   ("logical_or", "logical_or"), ("logical_xor", "logical_xor")]:
    defop(_name, inputs=("X", "Y"), infer_shape=_broadcast_shape("bool"), differentiable=False)(
        _elementwise(_fn))


@defop("logical_not", infer_shape=same_as("X", dtype="bool", keep_lod=False), differentiable=False)
def logical_not(op, ctx):
    return torch.logical_not


@defop("scale", infer_shape=_SAME, row_wise=True, grad_lod=(("X", "Out@GRAD"),))
def scale(op, ctx):
    s, b = float(attr(op, "scale", 1.0)), float(attr(op, "bias", 0.0))
    after = attr(op, "bias_after_scale", True)
    if _is_int_var(ctx, op.input("X")[0]):
        # Paddle's kernel casts scale and bias to the integer type (static_cast: toward zero), so an int64
        # Variable * 2 or + 1 stays int64
        s, b = int(s), int(b)
    inplace = op.input("X") == op.output("Out")
    if inplace and b == 0.0:
        def k(x):
            if not torch.is_grad_enabled():
                return x.mul_(s)
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


@defop("sum", inputs=("X*",), infer_shape=same_as("X"), row_wise=True, grad_lod=(("X", "Out@GRAD"),))
def sum_(op, ctx):
    def k(xs):
        if len(xs) == 2 and not (xs[0].is_sparse or xs[1].is_sparse):
            return xs[0] + xs[1]    # a pserver's sum of 2 trainers' gradients, every step
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
            return _merge_add(sparse)
        if len(dense) == 1:
            return dense[0]
        out = dense[0] + dense[1]
        for d in dense[2:]:   # left to right, as Paddle's sum kernel adds
            out = out + d
        return out
    return k


def _merge_add(ts):
    """Row-sparse (SelectedRows) inputs added up as Paddle's sum kernel does (its MergeAdd): when no row
    repeats across all of them, their rows are concatenated in input order; otherwise each row once,
    ascending, its values added input by input in order (index_add_ keeps that order, so the float sums
    are Paddle's). One input is merged too."""
    rows = torch.cat([t._indices()[0] for t in ts])
    values = torch.cat([t._values() for t in ts])
    shape = tuple(ts[0].shape)
    uniq, inverse = torch.unique(rows, sorted=True, return_inverse=True)
    if uniq.numel() == rows.numel():
        if len(ts) == 1:
            return ts[0]
        return torch.sparse_coo_tensor(rows.reshape(1, -1), values, shape, check_invariants=False)
    out = values.new_zeros((uniq.numel(),) + tuple(values.shape[1:])).index_add_(0, inverse, values)
    return torch.sparse_coo_tensor(uniq.reshape(1, -1), out, shape, check_invariants=False, is_coalesced=True)


@defop("mean", infer_shape=lambda ins, attrs: {"Out": OutMeta((1,), first(ins, "X").dtype)})
def mean(op, ctx):
    # in Paddle 1.8's summation order (ops/eigen_reduce.py)
    return lambda x: eigen_reduce.reduce_sum(x, None, mean=True).reshape(1)


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


def _reduce_shape(ins, attrs):
    x = first(ins, "X")
    dims = None if attrs.get("reduce_all", False) else list(attrs.get("dim", [0]))
    return {"Out": OutMeta(reduce_dims(x.shape, dims, attrs.get("keep_dim", False)), x.dtype)}


# in Paddle 1.8's summation order (ops/eigen_reduce.py): a clip's global norm depends on it
defop("reduce_sum", infer_shape=_reduce_shape)(_reduce(lambda x, d, k: eigen_reduce.reduce_sum(x, d, k)))
defop("reduce_mean", infer_shape=_reduce_shape)(_reduce(lambda x, d, k: eigen_reduce.reduce_sum(x, d, k, mean=True)))
defop("reduce_max", infer_shape=_reduce_shape)(_reduce(_amax))
defop("reduce_min", infer_shape=_reduce_shape)(_reduce(_amin))
defop("reduce_prod", infer_shape=_reduce_shape)(_reduce(_prod))


@defop("clip", infer_shape=_SAME, row_wise=True)
def clip(op, ctx):
    # Paddle's min/max attrs are float32: 1.8e308 (clamp's default max) becomes inf, 2.2e-308 becomes 0.
    lo, hi = float(np.float32(attr(op, "min"))), float(np.float32(attr(op, "max")))

    def k(x):
        if x.is_sparse:   # row-sparse: merge repeated rows, clip the merged values (Paddle's kernel)
            rows, values = _merge_rows(x)
            return _make_rows(rows, torch.clamp(values, lo, hi), x.shape[0])
        return torch.clamp(x, lo, hi)
    return k


@defop("clip_by_norm", infer_shape=_SAME)
def clip_by_norm(op, ctx):
    max_norm = float(attr(op, "max_norm"))

    def dense(x):
        norm = torch.sqrt(eigen_reduce.reduce_sum(x * x, None))
        return torch.where(norm > max_norm, x * (max_norm / norm), x)

    def k(x):
        if x.is_sparse:   # the norm of the merged rows (Paddle's kernel merges first)
            rows, values = _merge_rows(x)
            return _make_rows(rows, dense(values), x.shape[0])
        return dense(x)
    return k


@defop("squared_l2_norm", infer_shape=lambda ins, attrs: {"Out": OutMeta((1,), first(ins, "X").dtype)})
def squared_l2_norm(op, ctx):
    return lambda x: eigen_reduce.reduce_sum(x * x, None).reshape(1)


# Paddle 1.8 cumsum: axis defaults to -1; `exclusive` shifts by one (first element 0); `reverse` sums from
# the end. Gradient: autograd through the torch ops below (a reversed cumsum of the output grad).
@defop("cumsum", infer_shape=same_as("X"))
def cumsum(op, ctx):
    axis, exclusive, reverse = attr(op, "axis", -1), attr(op, "exclusive", False), attr(op, "reverse", False)

    def k(x):
        if reverse:
            x = torch.flip(x, [axis])
        out = torch.cumsum(x, axis)
        if exclusive:
            out = out - x
        return torch.flip(out, [axis]) if reverse else out

    return k


# ---- linear algebra ---------------------------------------------------------------------------------

def _addmm_shape(ins, attrs):
    x, y = first(ins, "X"), first(ins, "Y")
    return {"Out": OutMeta((x.shape[0], y.shape[1]), x.dtype)}


@defop("addmm", inputs=("Input", "X", "Y"), infer_shape=_addmm_shape)
def addmm(op, ctx):
    a, b = float(attr(op, "Alpha", 1.0)), float(attr(op, "Beta", 1.0))
    return lambda inp, x, y: b * inp + a * torch.matmul(x, y)


def _bmm_shape(ins, attrs):
    x, y = first(ins, "X"), first(ins, "Y")
    return {"Out": OutMeta((x.shape[0], x.shape[1], y.shape[2]), x.dtype)}


@defop("bmm", inputs=("X", "Y"), infer_shape=_bmm_shape)
def bmm(op, ctx):
    return torch.bmm


def _dot_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(tuple(x.shape[:-1]) + (1,), x.dtype)}


@defop("dot", inputs=("X", "Y"), infer_shape=_dot_shape)
def dot(op, ctx):
    return lambda x, y: torch.sum(x * y, -1, keepdim=True)


@defop("dist", inputs=("X", "Y"), infer_shape=lambda ins, attrs: {"Out": OutMeta((1,), first(ins, "X").dtype)})
def dist(op, ctx):
    p = float(attr(op, "p", 2.0))

    def k(x, y):
        d = (x - y).abs().reshape(-1)
        if p == 0:
            return (d != 0).sum().to(x.dtype).reshape(1)
        if math.isinf(p):
            return (d.max() if p > 0 else d.min()).reshape(1)
        return torch.sum(d ** p).pow(1.0 / p).reshape(1)
    return k


@defop("cross", inputs=("X", "Y"), infer_shape=same_as("X"))
def cross(op, ctx):
    dim = attr(op, "dim", None)

    def k(x, y):
        d = dim
        if d is None or d in (-100, 9):  # Paddle's default 9 (kDefaultDim): the first axis of size 3
            d = next(i for i, s in enumerate(x.shape) if s == 3)
        return torch.cross(x, y, dim=d)
    return k


def _kron_shape(ins, attrs):
    x, y = first(ins, "X"), first(ins, "Y")
    xs, ys = list(x.shape), list(y.shape)
    n = max(len(xs), len(ys))
    xs, ys = [1] * (n - len(xs)) + xs, [1] * (n - len(ys)) + ys
    return {"Out": OutMeta([a * b if a >= 0 and b >= 0 else -1 for a, b in zip(xs, ys)], x.dtype)}


@defop("kron", inputs=("X", "Y"), infer_shape=_kron_shape)
def kron(op, ctx):
    return torch.kron


def _trace_shape(ins, attrs):
    x = first(ins, "Input")
    n = len(x.shape)
    d1, d2 = attrs.get("dim1", 0) % n, attrs.get("dim2", 1) % n
    rest = [s for i, s in enumerate(x.shape) if i not in (d1, d2)]
    return {"Out": OutMeta(rest or [1], x.dtype)}


@defop("trace", inputs=("Input",), infer_shape=_trace_shape)
def trace(op, ctx):
    off, d1, d2 = attr(op, "offset", 0), attr(op, "dim1", 0), attr(op, "dim2", 1)

    def k(x):
        out = torch.diagonal(x, off, d1, d2).sum(-1)
        return out.reshape(1) if out.dim() == 0 else out
    return k


@defop("tril_triu", infer_shape=same_as("X"))
def tril_triu(op, ctx):
    d, lower = attr(op, "diagonal", 0), attr(op, "lower", True)
    return lambda x: torch.tril(x, d) if lower else torch.triu(x, d)


def _diag_embed_shape(ins, attrs):
    x = first(ins, "Input")
    n = len(x.shape) + 1
    d1, d2, off = attrs.get("dim1", -2) % n, attrs.get("dim2", -1) % n, attrs.get("offset", 0)
    last = x.shape[-1]
    m = last + abs(off) if last >= 0 else -1
    rest = list(x.shape[:-1])
    out = []
    for i in range(n):
        out.append(m if i in (d1, d2) else rest.pop(0))
    return {"Out": OutMeta(out, x.dtype)}


@defop("diag_embed", inputs=("Input",), infer_shape=_diag_embed_shape, differentiable=False)
def diag_embed(op, ctx):
    off, d1, d2 = attr(op, "offset", 0), attr(op, "dim1", -2), attr(op, "dim2", -1)
    return lambda x: torch.diag_embed(x, off, d1, d2)


def _diag_shape(ins, attrs):
    d = first(ins, "Diagonal")
    return {"Out": OutMeta((d.shape[0], d.shape[0]), d.dtype)}


@defop("diag", inputs=("Diagonal",), infer_shape=_diag_shape, differentiable=False)
def diag(op, ctx):
    return torch.diag


def _eye_shape(ins, attrs):
    return {"Out": OutMeta((attrs["num_rows"], attrs["num_columns"]), attrs["dtype"])}


@defop("eye", inputs=(), infer_shape=_eye_shape, differentiable=False)
def eye(op, ctx):
    r, c, dt = attr(op, "num_rows"), attr(op, "num_columns"), attr(op, "dtype")
    return lambda: torch.eye(r, c, dtype=torch_dtype(dt), device=ctx.device)


def _linspace_shape(ins, attrs):
    return {"Out": OutMeta((attrs.get("__num", -1),), first(ins, "Start").dtype)}


@defop("linspace", inputs=("Start", "Stop", "Num"), infer_shape=_linspace_shape, differentiable=False,
       host_inputs=("Start", "Stop", "Num"))
def linspace(op, ctx):
    def k(start, stop, num):
        n = int(num.reshape(-1)[0])
        return torch.linspace(float(start.reshape(-1)[0]), float(stop.reshape(-1)[0]), n,
                              dtype=start.dtype, device=start.device)
    return k


# ---- bool reductions and checks -----------------------------------------------------------------------

def _bool_reduce_shape(ins, attrs):
    x = first(ins, "X")
    dims = None if attrs.get("reduce_all") else attrs.get("dim")
    return {"Out": OutMeta(reduce_dims(x.shape, dims, attrs.get("keep_dim", False)), x.dtype)}


def _bool_reduce(fn):
    def factory(op, ctx):
        dims = None if attr(op, "reduce_all", False) else list(attr(op, "dim", [0]))
        keep = attr(op, "keep_dim", False)

        def k(x):
            if dims is None:
                out = fn(x)
                return out.reshape([1] * x.dim()) if keep else out.reshape(1)
            out = x
            for d in sorted((d % x.dim() for d in dims), reverse=True):
                out = fn(out, d, keepdim=keep)
            return out.reshape(1) if out.dim() == 0 else out
        return k
    return factory


defop("reduce_all", infer_shape=_bool_reduce_shape, differentiable=False)(
    _bool_reduce(lambda *a, **k: torch.all(*a, **k)))
defop("reduce_any", infer_shape=_bool_reduce_shape, differentiable=False)(
    _bool_reduce(lambda *a, **k: torch.any(*a, **k)))


def _flag_shape(dtype=None):
    return lambda ins, attrs: {"Out": OutMeta((1,), dtype or first(ins, "X").dtype)}


# Paddle 1.8's isinf / isnan / isfinite ops reduce to one flag: "has any inf", "has any nan", "all finite".
defop("isinf", infer_shape=_flag_shape(), differentiable=False)(
    lambda op, ctx: (lambda x: torch.isinf(x).any().reshape(1).to(x.dtype)))
defop("isnan", infer_shape=_flag_shape(), differentiable=False)(
    lambda op, ctx: (lambda x: torch.isnan(x).any().reshape(1).to(x.dtype)))
defop("isfinite", infer_shape=_flag_shape("bool"), differentiable=False)(
    lambda op, ctx: (lambda x: torch.isfinite(x).all().reshape(1)))


@defop("allclose", inputs=("Input", "Other"), infer_shape=lambda ins, attrs: {"Out": OutMeta((1,), "bool")},
       differentiable=False)
def allclose(op, ctx):
    rtol, atol, nan = float(attr(op, "rtol", 1e-5)), float(attr(op, "atol", 1e-8)), attr(op, "equal_nan", False)
    # on the device (torch.allclose answers a Python bool: a read back)
    return lambda a, b: torch.isclose(a, b, rtol, atol, nan).all().reshape(1)


@defop("size", inputs=("Input",), infer_shape=lambda ins, attrs: {"Out": OutMeta((1,), "int64")},
       differentiable=False)
def size(op, ctx):
    return lambda x: torch.full((1,), x.numel(), dtype=torch.int64, device=x.device)   # (a fill, not an upload)
