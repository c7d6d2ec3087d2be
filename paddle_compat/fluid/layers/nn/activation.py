"""The activations Paddle's fluid.layers.nn holds (relu, elu, swish, selu, mish, prelu, log_softmax, ...)."""

from ...layer_helper import LayerHelper
from ..layer_function_generator import generate_activation_fn
from ..tensor import cast
from ..utils import append_defined, single, unary_defined
from ...initializer import Constant
from .common import softmax

__all__ = ["stanh", "brelu", "soft_relu", "selu", "hard_swish", "mish", "log_softmax", "relu", "log", "sign", "relu6",
           "elu", "swish", "leaky_relu", "hard_sigmoid", "pow", "prelu"]


def stanh(x, scale_a=0.67, scale_b=1.7159, name=None):
    return unary_defined("stanh", x, {"scale_a": scale_a, "scale_b": scale_b}, name)


def brelu(x, t_min=0.0, t_max=24.0, name=None):
    return unary_defined("brelu", x, {"t_min": t_min, "t_max": t_max}, name)


def soft_relu(x, threshold=40.0, name=None):
    return unary_defined("soft_relu", x, {"threshold": threshold}, name)


def selu(x, scale=None, alpha=None, name=None):
    attrs = {}
    if scale is not None:
        attrs["scale"] = scale
    if alpha is not None:
        attrs["alpha"] = alpha
    return unary_defined("selu", x, attrs, name)


def hard_swish(x, threshold=6.0, scale=6.0, offset=3.0, name=None):
    return unary_defined("hard_swish", x, {"threshold": threshold, "scale": scale, "offset": offset}, name)


def mish(x, threshold=20, name=None):
    return unary_defined("mish", x, {"threshold": threshold}, name)


def log_softmax(input, axis=None, dtype=None, name=None):
    if dtype is not None:
        input = cast(input, dtype)
    return log(softmax(input, axis=-1 if axis is None else axis), name)


relu = generate_activation_fn("relu")


log = generate_activation_fn("log")


sign = generate_activation_fn("sign")


relu6 = generate_activation_fn("relu6", [("threshold", 6.0)])


elu = generate_activation_fn("elu", [("alpha", 1.0)])


swish = generate_activation_fn("swish", [("beta", 1.0)])


leaky_relu = generate_activation_fn("leaky_relu", [("alpha", 0.02)])


hard_sigmoid = generate_activation_fn("hard_sigmoid", [("slope", 0.2), ("offset", 0.5)])


pow = generate_activation_fn("pow", [("factor", 1.0)])


def prelu(x, mode, param_attr=None, name=None):
    """max(0, x) + alpha * min(0, x); alpha is one number ('all'), one per channel, or one per element."""
    if mode not in ("all", "channel", "element"):
        raise ValueError("prelu: mode must be 'all', 'channel' or 'element', got %r" % (mode,))
    helper = LayerHelper("prelu", param_attr=param_attr, name=name)
    shape = [1] if mode == "all" else [1, x.shape[1], 1, 1] if mode == "channel" else [1] + list(x.shape[1:])
    alpha = helper.create_parameter(attr=helper.param_attr, shape=shape, dtype=x.dtype,
                                    default_initializer=Constant(0.25))
    return single(append_defined("prelu", {"X": x, "Alpha": alpha}, {"mode": mode}, helper=helper))
