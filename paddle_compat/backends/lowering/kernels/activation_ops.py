"""Activations and softmax."""

import torch
import torch.nn.functional as F

from ..registry import register
from .common import attr, softmax_shift

_SIMPLE = {
    "relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "exp": torch.exp, "log": torch.log,
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "abs": torch.abs, "square": torch.square,
    "softsign": F.softsign, "ceil": torch.ceil, "floor": torch.floor, "round": torch.round,
    "reciprocal": torch.reciprocal, "sign": torch.sign, "cos": torch.cos, "sin": torch.sin,
    "logsigmoid": F.logsigmoid,
}

for _name, _fn in _SIMPLE.items():
    register(_name)((lambda fn: lambda op, ctx: fn)(_fn))


@register("softplus")
def softplus(op, ctx):
    return F.softplus


@register("relu6")
def relu6(op, ctx):
    t = float(attr(op, "threshold", 6.0))
    return lambda x: torch.clamp(x, 0.0, t)


@register("elu")
def elu(op, ctx):
    a = float(attr(op, "alpha", 1.0))
    return lambda x: F.elu(x, a)


@register("gelu")
def gelu(op, ctx):
    approx = "tanh" if attr(op, "approximate", False) else "none"
    return lambda x: F.gelu(x, approximate=approx)


@register("swish")
def swish(op, ctx):
    b = float(attr(op, "beta", 1.0))
    return lambda x: x * torch.sigmoid(b * x)


@register("leaky_relu")
def leaky_relu(op, ctx):
    a = float(attr(op, "alpha", 0.02))
    return lambda x: F.leaky_relu(x, a)


@register("hard_sigmoid")
def hard_sigmoid(op, ctx):
    s, o = float(attr(op, "slope", 0.2)), float(attr(op, "offset", 0.5))
    return lambda x: torch.clamp(x * s + o, 0.0, 1.0)


@register("pow")
def pow_(op, ctx):
    f = float(attr(op, "factor", 1.0))
    return lambda x: torch.pow(x, f)


@register("softmax")
def softmax(op, ctx):
    axis = attr(op, "axis", -1)
    return lambda x: torch.softmax(softmax_shift(x, axis), axis)


@register("prelu", inputs=("X", "Alpha"))
def prelu(op, ctx):
    mode = attr(op, "mode", "all")

    def k(x, alpha):
        a = alpha.reshape(1) if mode == "all" else alpha
        return torch.where(x > 0, x, a * x)
    return k
