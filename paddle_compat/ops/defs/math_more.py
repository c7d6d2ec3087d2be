"""Math and tensor ops of Paddle 1.8 (fluid.layers names added for 1.8 parity): element-wise activations,
linear algebra helpers, reductions over bools, sorting, index ops and tensor constructors."""

import math

from ...ir.lazy import torch, torch_dtype
from ..registry import OutMeta, attr, defop
from ..shapes import first, reduce_dims, same_as


def _unary(op_type, make):
    """An element-wise op X -> Out; make(op) returns the torch function."""
    defop(op_type, infer_shape=same_as("X"))(lambda op, ctx: make(op))


_unary("log1p", lambda op: torch.log1p)
_unary("atan", lambda op: torch.atan)
_unary("acos", lambda op: torch.acos)
_unary("asin", lambda op: torch.asin)
_unary("erf", lambda op: torch.erf)
_unary("tanh_shrink", lambda op: (lambda x: x - torch.tanh(x)))


def _softshrink(op):
    lam = float(attr(op, "lambda", 0.5))
    return lambda x: torch.where(x > lam, x - lam, torch.where(x < -lam, x + lam, torch.zeros_like(x)))


def _hard_shrink(op):
    t = float(attr(op, "threshold", 0.5))
    return lambda x: torch.where((x > t) | (x < -t), x, torch.zeros_like(x))


def _thresholded_relu(op):
    t = float(attr(op, "threshold", 1.0))
    return lambda x: torch.where(x > t, x, torch.zeros_like(x))


def _stanh(op):
    a, b = float(attr(op, "scale_a", 0.67)), float(attr(op, "scale_b", 1.7159))
    return lambda x: b * torch.tanh(a * x)


def _brelu(op):
    lo, hi = float(attr(op, "t_min", 0.0)), float(attr(op, "t_max", 24.0))
    return lambda x: torch.clamp(x, lo, hi)


def _soft_relu(op):
    # Paddle: log(1 + exp(clip(x, -t, t))). Its gradient masks by the *output* being inside (-t, t), so it
    # is zero above t but keeps flowing below -t (as d/dx at -t): a straight-through lower clip.
    t = float(attr(op, "threshold", 40.0))

    def k(x):
        xc = torch.where(x < -t, x - x.detach() - t, torch.clamp(x, max=t))
        return torch.log1p(torch.exp(xc))
    return k


def _selu(op):
    s = float(attr(op, "scale", 1.0507009873554804934193349852946))
    a = float(attr(op, "alpha", 1.6732632423543772848170429916717))
    return lambda x: s * torch.where(x > 0, x, a * (torch.exp(x) - 1))


def _hard_swish(op):
    t, s, o = float(attr(op, "threshold", 6.0)), float(attr(op, "scale", 6.0)), float(attr(op, "offset", 3.0))
    return lambda x: x * torch.clamp(x + o, 0.0, t) / s


def _mish(op):
    # Paddle's softplus inside mish switches to x (resp. exp(x)) past +/- threshold, but its gradient uses
    # 1 - exp(-softplus) on every branch; the straight-through term below reproduces that.
    t = float(attr(op, "threshold", 20.0))

    def k(x):
        sp = torch.where(x > t, x, torch.where(x < -t, torch.exp(x), torch.log1p(torch.exp(x)))).detach()
        sp = sp + (x - x.detach()) * (1 - torch.exp(-sp))
        return x * torch.tanh(sp)
    return k


for _t, _m in (("softshrink", _softshrink), ("hard_shrink", _hard_shrink), ("thresholded_relu", _thresholded_relu),
               ("stanh", _stanh), ("brelu", _brelu), ("soft_relu", _soft_relu), ("selu", _selu),
               ("hard_swish", _hard_swish), ("mish", _mish)):
    _unary(_t, _m)


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


@defop("linspace", inputs=("Start", "Stop", "Num"), infer_shape=_linspace_shape, differentiable=False)
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
    return lambda a, b: torch.tensor([torch.allclose(a, b, rtol, atol, nan)], device=a.device)


@defop("size", inputs=("Input",), infer_shape=lambda ins, attrs: {"Out": OutMeta((1,), "int64")},
       differentiable=False)
def size(op, ctx):
    return lambda x: torch.tensor([x.numel()], dtype=torch.int64, device=x.device)
