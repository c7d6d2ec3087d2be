"""Paddle's fluid.layers.ops: the activations and unary math Paddle generates from op types, cumsum, and the _scale
helper."""

from ..layer_helper import LayerHelper
from .layer_function_generator import generate_activation_fn
from .utils import append_defined, check_variable, single, unary_defined

__all__ = ["cumsum", "atan", "acos", "asin", "tanh_shrink", "erf", "softshrink", "hard_shrink", "thresholded_relu",
           "sigmoid", "tanh", "exp", "sqrt", "rsqrt", "abs", "square", "softsign", "softplus", "ceil", "floor",
           "round", "reciprocal", "cos", "sin", "logsigmoid", "gelu"]


def cumsum(x, axis=None, exclusive=None, reverse=None):
    check_variable(x, "x", "cumsum")
    attrs = {"axis": -1 if axis is None else int(axis), "exclusive": bool(exclusive), "reverse": bool(reverse)}
    return single(append_defined("cumsum", {"X": x}, attrs))


def atan(x, name=None):
    return unary_defined("atan", x, name=name)


def acos(x, name=None):
    return unary_defined("acos", x, name=name)


def asin(x, name=None):
    return unary_defined("asin", x, name=name)


def tanh_shrink(x, name=None):
    return unary_defined("tanh_shrink", x, name=name)


def erf(x):
    return unary_defined("erf", x)


def softshrink(x, alpha=None):
    return unary_defined("softshrink", x, {} if alpha is None else {"lambda": float(alpha)})


def hard_shrink(x, threshold=None):
    return unary_defined("hard_shrink", x, {} if threshold is None else {"threshold": float(threshold)})


def thresholded_relu(x, threshold=None):
    return unary_defined("thresholded_relu", x, {} if threshold is None else {"threshold": float(threshold)})


sigmoid = generate_activation_fn("sigmoid")


tanh = generate_activation_fn("tanh")


exp = generate_activation_fn("exp")


sqrt = generate_activation_fn("sqrt")


rsqrt = generate_activation_fn("rsqrt")


abs = generate_activation_fn("abs")


square = generate_activation_fn("square")


softsign = generate_activation_fn("softsign")


softplus = generate_activation_fn("softplus")


ceil = generate_activation_fn("ceil")


floor = generate_activation_fn("floor")


round = generate_activation_fn("round")


reciprocal = generate_activation_fn("reciprocal")


cos = generate_activation_fn("cos")


sin = generate_activation_fn("sin")


logsigmoid = generate_activation_fn("logsigmoid")


gelu = generate_activation_fn("gelu", [("approximate", False)])


def _scale(x, scale=1.0, bias=0.0, bias_after_scale=True, out=None, name=None):
    """Paddle's generated `layers.ops._scale`: the scale op, writing into `out` when given (a variable
    made beforehand, e.g. one a server program's clients fetch by name)."""
    check_variable(x, "x", "_scale")
    attrs = {"scale": float(scale), "bias": float(bias), "bias_after_scale": bias_after_scale}
    if out is None:
        return single(append_defined("scale", {"X": x}, attrs, name=name))
    check_variable(out, "out", "_scale")
    LayerHelper("scale", name=name).append_op(type="scale", inputs={"X": [x]}, outputs={"Out": [out]},
                                              attrs=attrs)
    return out
