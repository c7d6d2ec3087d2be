"""Activations, elementwise ops with Paddle's `axis` broadcasting, reductions, and small math layers."""

from ..layer_helper import LayerHelper
from .helpers import append_defined, check_variable, out_var, single

__all__ = [
    "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs", "square", "softsign", "softplus",
    "ceil", "floor", "round", "reciprocal", "sign", "relu6", "elu", "gelu", "swish", "leaky_relu",
    "hard_sigmoid", "logsigmoid", "cos", "sin", "pow", "scale", "clip", "clip_by_norm",
    "elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div", "elementwise_max",
    "elementwise_min", "elementwise_pow", "elementwise_mod", "elementwise_floordiv",
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "mean",
    "less_than", "less_equal", "greater_than", "greater_equal", "equal", "not_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "prelu", "label_smooth",
]


def _act(op_type, attr_names=()):
    def layer(x, *args, name=None, **kwargs):
        check_variable(x, "x", op_type)
        attrs = {}
        for k, v in zip(attr_names, args):
            attrs[k[0]] = v
        for k, default in attr_names:
            if k in kwargs:
                attrs[k] = kwargs.pop(k)
            attrs.setdefault(k, default)
        if kwargs:
            raise TypeError("%s() got unexpected arguments %s" % (op_type, sorted(kwargs)))
        return single(append_defined(op_type, {"X": x}, attrs, name=name))

    layer.__name__ = op_type
    layer.__doc__ = "Paddle's %s activation: Out = %s(X), same shape and LoD as X." % (op_type, op_type)
    return layer


relu = _act("relu")
sigmoid = _act("sigmoid")
tanh = _act("tanh")
exp = _act("exp")
log = _act("log")
sqrt = _act("sqrt")
rsqrt = _act("rsqrt")
abs = _act("abs")
square = _act("square")
softsign = _act("softsign")
softplus = _act("softplus")
ceil = _act("ceil")
floor = _act("floor")
round = _act("round")
reciprocal = _act("reciprocal")
sign = _act("sign")
cos = _act("cos")
sin = _act("sin")
logsigmoid = _act("logsigmoid")
relu6 = _act("relu6", [("threshold", 6.0)])
elu = _act("elu", [("alpha", 1.0)])
gelu = _act("gelu", [("approximate", False)])
swish = _act("swish", [("beta", 1.0)])
leaky_relu = _act("leaky_relu", [("alpha", 0.02)])
hard_sigmoid = _act("hard_sigmoid", [("slope", 0.2), ("offset", 0.5)])
pow = _act("pow", [("factor", 1.0)])


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    check_variable(x, "x", "scale")
    helper = LayerHelper("scale", name=name, act=act)
    out = single(append_defined("scale", {"X": x}, {"scale": float(scale), "bias": float(bias),
                                                    "bias_after_scale": bias_after_scale}, helper=helper))
    return helper.append_activation(out)


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


def clip(x, min, max, name=None):
    return single(append_defined("clip", {"X": x}, {"min": float(min), "max": float(max)}, name=name))


def clip_by_norm(x, max_norm, name=None):
    return single(append_defined("clip_by_norm", {"X": x}, {"max_norm": float(max_norm)}, name=name))


# elementwise --------------------------------------------------------------------------------------------
def _broadcast_out_shape(x, y):
    return x.shape if len(x.shape) >= len(y.shape) else y.shape


def _elementwise(op_type):
    def layer(x, y, axis=-1, act=None, name=None):
        check_variable(x, "x", op_type)
        check_variable(y, "y", op_type)
        helper = LayerHelper(op_type, name=name, act=act)
        out = single(append_defined(op_type, {"X": x, "Y": y}, {"axis": int(axis)}, helper=helper))
        return helper.append_activation(out)

    layer.__name__ = op_type
    layer.__doc__ = ("Paddle's %s: Y broadcasts onto X with Y's dims aligned at X's dim `axis` "
                     "(-1: trailing dims)." % op_type)
    return layer


elementwise_add = _elementwise("elementwise_add")
elementwise_sub = _elementwise("elementwise_sub")
elementwise_mul = _elementwise("elementwise_mul")
elementwise_div = _elementwise("elementwise_div")
elementwise_max = _elementwise("elementwise_max")
elementwise_min = _elementwise("elementwise_min")
elementwise_pow = _elementwise("elementwise_pow")
elementwise_mod = _elementwise("elementwise_mod")
elementwise_floordiv = _elementwise("elementwise_floordiv")


# comparison / logic (outputs are bool and carry no gradient) --------------------------------------------
def _compare(op_type):
    def layer(x, y, cond=None, name=None, force_cpu=None):
        helper = LayerHelper(op_type, name=name)
        if cond is None:
            cond = out_var(helper, "bool", _broadcast_out_shape(x, y), stop_gradient=True)
        helper.append_op(type=op_type, inputs={"X": [x], "Y": [y]}, outputs={"Out": [cond]},
                         attrs={"axis": -1, "force_cpu": bool(force_cpu)})
        return cond

    layer.__name__ = op_type
    return layer


less_than = _compare("less_than")
less_equal = _compare("less_equal")
greater_than = _compare("greater_than")
greater_equal = _compare("greater_equal")
equal = _compare("equal")
not_equal = _compare("not_equal")


def _logical(op_type, binary=True):
    def layer(x, y=None, out=None, name=None):
        helper = LayerHelper(op_type, name=name)
        if out is None:
            out = out_var(helper, "bool", x.shape, stop_gradient=True)
        inputs = {"X": [x], "Y": [y]} if binary else {"X": [x]}
        helper.append_op(type=op_type, inputs=inputs, outputs={"Out": [out]})
        return out

    layer.__name__ = op_type
    return layer


logical_and = _logical("logical_and")
logical_or = _logical("logical_or")
logical_xor = _logical("logical_xor")
logical_not = _logical("logical_not", binary=False)


# reductions -------------------------------------------------------------------------------------------
def _reduce(op_type):
    def layer(input, dim=None, keep_dim=False, name=None):
        check_variable(input, "input", op_type)
        nd = len(input.shape)
        if dim is not None and not isinstance(dim, (list, tuple)):
            dim = [dim]
        reduce_all = dim is None or len(dim) == 0 or len(dim) == nd
        dims = list(range(nd)) if reduce_all else [d + nd if d < 0 else d for d in dim]
        for d in dims:
            if not 0 <= d < max(nd, 1):
                raise ValueError("%s: dim %s is out of range for input of rank %d" % (op_type, dim, nd))
        return single(append_defined(op_type, {"X": input}, {"dim": dims if not reduce_all else [0],
                                                             "keep_dim": bool(keep_dim),
                                                             "reduce_all": bool(reduce_all)}, name=name))

    layer.__name__ = op_type
    return layer


reduce_sum = _reduce("reduce_sum")
reduce_mean = _reduce("reduce_mean")
reduce_max = _reduce("reduce_max")
reduce_min = _reduce("reduce_min")
reduce_prod = _reduce("reduce_prod")


def mean(x, name=None):
    """Mean of all elements; a [1] tensor (Fluid 1.x's `mean` op)."""
    check_variable(x, "x", "mean")
    return single(append_defined("mean", {"X": x}, {}, name=name))


def prelu(x, mode, param_attr=None, name=None):
    """max(0, x) + alpha * min(0, x); alpha is one number ('all'), one per channel, or one per element."""
    from ..initializer import Constant
    if mode not in ("all", "channel", "element"):
        raise ValueError("prelu: mode must be 'all', 'channel' or 'element', got %r" % (mode,))
    helper = LayerHelper("prelu", param_attr=param_attr, name=name)
    shape = [1] if mode == "all" else [1, x.shape[1], 1, 1] if mode == "channel" else [1] + list(x.shape[1:])
    alpha = helper.create_parameter(attr=helper.param_attr, shape=shape, dtype=x.dtype,
                                    default_initializer=Constant(0.25))
    return single(append_defined("prelu", {"X": x, "Alpha": alpha}, {"mode": mode}, helper=helper))


def label_smooth(label, prior_dist=None, epsilon=0.1, dtype="float32", name=None):
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError("label_smooth: epsilon must be in [0, 1], got %s" % epsilon)
    helper = LayerHelper("label_smooth", name=name)
    out = out_var(helper, dtype, label.shape)
    inputs = {"X": [label]}
    if prior_dist is not None:
        inputs["PriorDist"] = [prior_dist]
    helper.append_op(type="label_smooth", inputs=inputs, outputs={"Out": [out]}, attrs={"epsilon": float(epsilon)})
    return out
