"""Activations and softmax: elementwise, so every output has the shape and LoD of X (Paddle's activation_op
family, with selu, mish, erf and the other unary ops of its 1.8 layers)."""

import math

from ...ir.lazy import F, torch, torch_dtype
from ..registry import attr, defop, OutMeta
from ..shapes import first, reduce_dims, same_as


_SAME = same_as("X")

# The one activation map: name -> (module, function name), looked up when a kernel is built, so defining the
# ops loads no torch. Each is an op here, and the fused and recurrent kernels take theirs from it (activation).
ACTIVATIONS = {
    "relu": (torch, "relu"), "sigmoid": (torch, "sigmoid"), "tanh": (torch, "tanh"), "exp": (torch, "exp"),
    "log": (torch, "log"), "sqrt": (torch, "sqrt"), "rsqrt": (torch, "rsqrt"), "abs": (torch, "abs"),
    "square": (torch, "square"), "softsign": (F, "softsign"), "ceil": (torch, "ceil"), "floor": (torch, "floor"),
    "round": (torch, "round"), "reciprocal": (torch, "reciprocal"), "sign": (torch, "sign"),
    "cos": (torch, "cos"), "sin": (torch, "sin"), "logsigmoid": (F, "logsigmoid"),
}
_IDENTITY = ("identity", "linear")


def activation(name):
    """The torch function of activation `name` ("identity" and "linear": the input itself); KeyError when
    there is none."""
    if name in _IDENTITY:
        return _identity
    mod, fn = ACTIVATIONS[name]
    return getattr(mod, fn)


def _identity(x):
    return x


# piecewise-constant outputs: no gradient reaches X
_NO_GRAD = {"sign", "floor", "ceil", "round"}
# a pserver may run these on its row block of a parameter (distributed fact: row_wise)
_ROW_WISE = {"sign", "abs", "square"}

# Paddle's CPU kernels call libm's expf/cosf/sinf element by element on a tensor too small for one vector
# (under 8 floats), which torch's vectorized float32 versions miss by an ulp now and then; a learning-rate
# schedule is such a [1] tensor, and an ulp there moves every later step. float64 rounded to float32 agrees
# with libm there (checked against Paddle 1.8.5 on 300 random inputs for exp).
_LIBM_SMALL = {"exp", "cos", "sin"}
_SMALL = 8


def _libm_small(fn):
    def run(x):
        if x.dtype == torch.float32 and x.numel() < _SMALL and x.device.type == "cpu":
            return fn(x.double()).float()
        return fn(x)
    return run


# X@GRAD takes Out@GRAD's LoD (Paddle 1.8.5's ActivationOpGrad; recorded for these, make_grad_lod.py)
_GRAD_LOD = {"relu", "sigmoid", "tanh"}

for _name, (_mod, _fn) in ACTIVATIONS.items():
    defop(_name, infer_shape=_SAME, differentiable=_name not in _NO_GRAD, row_wise=_name in _ROW_WISE,
          grad_lod=(("X", "Out@GRAD"),) if _name in _GRAD_LOD else ())(
        (lambda mod, fn, small: lambda op, ctx: _libm_small(getattr(mod, fn)) if small else getattr(mod, fn))(
            _mod, _fn, _name in _LIBM_SMALL))


@defop("softplus", infer_shape=_SAME)
def softplus(op, ctx):
    return F.softplus


@defop("relu6", infer_shape=_SAME)
def relu6(op, ctx):
    t = float(attr(op, "threshold", 6.0))
    return lambda x: torch.clamp(x, 0.0, t)


@defop("elu", infer_shape=_SAME)
def elu(op, ctx):
    a = float(attr(op, "alpha", 1.0))
    return lambda x: F.elu(x, a)


@defop("gelu", infer_shape=_SAME)
def gelu(op, ctx):
    approx = "tanh" if attr(op, "approximate", False) else "none"
    return lambda x: F.gelu(x, approximate=approx)


@defop("swish", infer_shape=_SAME)
def swish(op, ctx):
    b = float(attr(op, "beta", 1.0))
    return lambda x: x * torch.sigmoid(b * x)


@defop("leaky_relu", infer_shape=_SAME)
def leaky_relu(op, ctx):
    a = float(attr(op, "alpha", 0.02))
    return lambda x: F.leaky_relu(x, a)


@defop("hard_sigmoid", infer_shape=_SAME)
def hard_sigmoid(op, ctx):
    s, o = float(attr(op, "slope", 0.2)), float(attr(op, "offset", 0.5))
    return lambda x: torch.clamp(x * s + o, 0.0, 1.0)


@defop("pow", infer_shape=_SAME)
def pow_(op, ctx):
    f = float(attr(op, "factor", 1.0))
    return lambda x: torch.pow(x, f)


# Paddle 1.8's CPU softmax (also inside softmax_with_cross_entropy) clips x - max(x) at -64 before exp, so
# a far-off logit gets probability ~e^-64 (1.6e-28) rather than 0, and -log of it is at most ~64, never inf.
SOFTMAX_CLIP = -64.0


def softmax_shift(x, axis):
    """x - max(x) clipped at -64 along `axis`. The clip passes gradient straight through: Paddle's grad
    kernels compute from the (clipped) softmax output, as if the clip were not there."""
    y = x - x.detach().amax(axis, keepdim=True)
    # y - y.detach() is an exact zero carrying y's gradient; y + (clip - y).detach() would round to 0 for
    # y ~ -1e20 (sample_logits marks accidental hits with -1e20)
    return torch.where(y < SOFTMAX_CLIP, (y - y.detach()) + SOFTMAX_CLIP, y)


_CLIPPED_SOFTMAX = []


def clipped_softmax(x, axis):
    """softmax(softmax_shift(x)) in 4 kernels, and its gradient in 1: Paddle's softmax_grad from the output,
    (dy - sum(dy * y)) * y, which is what the straight-through clip amounts to. Where no gradient is wanted
    it skips the autograd.Function's bookkeeping."""
    if not (x.requires_grad and torch.is_grad_enabled()):
        return torch.softmax(_shift_clip(x, axis), axis)
    if not _CLIPPED_SOFTMAX:
        class ClippedSoftmax(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, axis):
                y = torch.softmax(_shift_clip(x, axis), axis)
                ctx.save_for_backward(y)
                ctx.axis = axis
                return y

            @staticmethod
            def backward(ctx, dy):
                y, = ctx.saved_tensors
                return torch._softmax_backward_data(dy, y, ctx.axis, y.dtype), None
        _CLIPPED_SOFTMAX.append(ClippedSoftmax)
    return _CLIPPED_SOFTMAX[0].apply(x, axis)


def _shift_clip(x, axis):
    return (x - x.amax(axis, keepdim=True)).clamp_(min=SOFTMAX_CLIP)


@defop("softmax", infer_shape=_SAME)
def softmax(op, ctx):
    axis = attr(op, "axis", -1)
    return lambda x: clipped_softmax(x, axis)


@defop("prelu", inputs=("X", "Alpha"), infer_shape=_SAME)
def prelu(op, ctx):
    mode = attr(op, "mode", "all")

    def k(x, alpha):
        a = alpha.reshape(1) if mode == "all" else alpha
        return torch.where(x > 0, x, a * x)
    return k


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
