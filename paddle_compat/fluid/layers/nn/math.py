"""Math layers of Paddle's fluid.layers.nn: elementwise ops, reductions, logical ops, linear algebra,
indexing by value (where, unique, index_select, ...) and similarity (cos_sim, bilinear_tensor_product)."""

import sys

import numpy as np

from ....ir import Variable, convert_dtype
from ...layer_helper import LayerHelper
from ..control_flow.compare import equal
from ..ops import exp
from ..tensor import assign, sums
from ..utils import append_defined, check_variable, out_var, single, unary_defined
from .activation import log
from .common import reshape, transpose
from .shape_ops import slice

__all__ = ["bilinear_tensor_product", "log1p", "logsumexp", "clamp", "addmm", "addcmul", "bmm", "dot", "dist", "t",
           "cross", "diag_embed", "reduce_all", "reduce_any", "allclose", "elementwise_equal", "size", "rank", "sum",
           "multiplex", "meshgrid", "flip", "roll", "index_select", "index_sample", "where", "nonzero", "unique",
           "unique_with_counts", "shard_index", "scale", "clip", "clip_by_norm", "elementwise_add", "elementwise_sub",
           "elementwise_mul", "elementwise_div", "elementwise_max", "elementwise_min", "elementwise_pow",
           "elementwise_mod", "elementwise_floordiv", "logical_and", "logical_or", "logical_xor", "logical_not",
           "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "mean", "label_smooth", "cos_sim"]


def bilinear_tensor_product(x, y, size, act=None, name=None, param_attr=None, bias_attr=None):
    helper = LayerHelper("bilinear_tensor_product", name=name, act=act, param_attr=param_attr,
                         bias_attr=bias_attr)
    w = helper.create_parameter(attr=helper.param_attr, shape=[size, x.shape[1], y.shape[1]], dtype=x.dtype)
    inputs = {"X": x, "Y": y, "Weight": w}
    if helper.bias_attr:
        inputs["Bias"] = helper.create_parameter(attr=helper.bias_attr, shape=[1, size], dtype=x.dtype,
                                                 is_bias=True)
    out = single(append_defined("bilinear_tensor_product", inputs, helper=helper))
    return helper.append_activation(out)


def log1p(x, out=None, name=None):
    return unary_defined("log1p", x, name=name)


def logsumexp(x, dim=None, keepdim=False, out=None, name=None):
    # Paddle 1.8 composes it (no max shift): log(reduce_sum(exp(x))).
    return log(reduce_sum(exp(x), dim, keepdim), name)


def clamp(input, min=None, max=None, output=None, name=None):
    if min is None and max is None:
        raise ValueError("clamp: either min or max must be given")
    inputs = {"X": input}
    attrs = {"min": sys.float_info.min, "max": sys.float_info.max}
    for key, slot, v in (("min", "Min", min), ("max", "Max", max)):
        if isinstance(v, Variable):
            v.stop_gradient = True
            inputs[slot] = v
        elif v is not None:
            attrs[key] = v
    helper = LayerHelper("clamp", name=name)
    out = output or out_var(helper, input.dtype, lod_level=input.lod_level)
    helper.append_op(type="clip", inputs={k: [v] for k, v in inputs.items()}, outputs={"Out": [out]}, attrs=attrs)
    return out


def addmm(input, x, y, alpha=1.0, beta=1.0, name=None):
    return single(append_defined("addmm", {"Input": input, "X": x, "Y": y}, {"Alpha": alpha, "Beta": beta},
                                 name=name))


def addcmul(input, tensor1, tensor2, value=1.0, out=None, name=None):
    res = elementwise_add(input, elementwise_mul(tensor1, tensor2) * value)
    if out is not None:
        assign(res, out)
        return out
    return res


def bmm(x, y, name=None):
    if len(x.shape) != 3 or len(y.shape) != 3:
        raise ValueError("bmm: x and y must be 3-D, got shapes %s and %s" % (list(x.shape), list(y.shape)))
    return single(append_defined("bmm", {"X": x, "Y": y}, name=name))


def dot(x, y, name=None):
    return single(append_defined("dot", {"X": x, "Y": y}, name=name))


def dist(x, y, p=2):
    return single(append_defined("dist", {"X": x, "Y": y}, {"p": float(p)}))


def t(input, name=None):
    if len(input.shape) > 2:
        raise ValueError("t: input must be at most 2-D, got shape %s (use transpose)" % (list(input.shape),))
    if len(input.shape) == 1:
        return input
    return transpose(input, [1, 0], name=name)


def cross(input, other, dim=None):
    return single(append_defined("cross", {"X": input, "Y": other}, {"dim": dim} if dim else {}))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    if not isinstance(input, Variable):
        input = assign(input)
    return single(append_defined("diag_embed", {"Input": input}, {"offset": offset, "dim1": dim1, "dim2": dim2},
                                 stop_gradient=True))


def _bool_reduce(op_type, input, dim, keep_dim, name):
    if dim is not None and not isinstance(dim, list):
        dim = [dim]
    return single(append_defined(op_type, {"X": input},
                                 {"dim": dim if dim else [0], "keep_dim": keep_dim, "reduce_all": not dim},
                                 name=name))


def reduce_all(input, dim=None, keep_dim=False, name=None):
    return _bool_reduce("reduce_all", input, dim, keep_dim, name)


def reduce_any(input, dim=None, keep_dim=False, name=None):
    return _bool_reduce("reduce_any", input, dim, keep_dim, name)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    return single(append_defined("allclose", {"Input": input, "Other": other},
                                 {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}, name=name))


def elementwise_equal(x, y, name=None):
    out = equal(x, y)
    out.stop_gradient = True
    return out


def size(input):
    return single(append_defined("size", {"Input": input}))


def rank(input):
    return assign(np.array(len(input.shape), "int32"))


def sum(x):
    return sums(list(x) if isinstance(x, (list, tuple)) else [x])


def multiplex(inputs, index):
    if len(inputs) < 2:
        raise ValueError("multiplex: inputs must be a list of at least 2 Variables, got %d" % len(inputs))
    return single(append_defined("multiplex", {"X": list(inputs), "Ids": index}))


def meshgrid(input, name=None):
    if not isinstance(input, list):
        raise TypeError("meshgrid: input must be a list of Variables, got %s" % type(input).__name__)
    return append_defined("meshgrid", {"X": input}, name=name)["Out"]


def flip(input, dims, name=None):
    if not dims:
        raise ValueError("flip: dims must name at least one axis")
    return single(append_defined("flip", {"X": input}, {"dims": list(dims)}, name=name))


def roll(input, shifts, dims=None):
    shape = input.shape
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else dims
    if dims is None:
        input, dims = reshape(input, [-1, 1]), [0]
    out = single(append_defined("roll", {"X": input}, {"dims": list(dims), "shifts": shifts}))
    return reshape(out, list(shape), inplace=True)


def index_select(input, index, dim=0):
    return single(append_defined("index_select", {"X": input, "Index": index}, {"dim": dim}))


def index_sample(x, index):
    return single(append_defined("index_sample", {"X": x, "Index": index}))


def where(condition):
    return single(append_defined("where_index", {"Condition": condition}, stop_gradient=True))


def nonzero(input, as_tuple=False):
    outs = where(input)
    if not as_tuple:
        return outs
    n = len(input.shape)
    if n == 1:
        return (outs,)
    return tuple(slice(outs, axes=[n - 1], starts=[i], ends=[i + 1]) for i in range(n))


def unique(x, dtype="int32"):
    outs = append_defined("unique", {"X": x}, {"dtype": convert_dtype(dtype)})
    return outs["Out"][0], outs["Index"][0]


def unique_with_counts(x, dtype="int32"):
    if dtype not in ("int32", "int64"):
        raise TypeError("unique_with_counts: index dtype must be int32 or int64, got %r" % (dtype,))
    if len(x.shape) != 1:
        raise ValueError("unique_with_counts: x must be 1-D, got shape %s" % (list(x.shape),))
    outs = append_defined("unique_with_counts", {"X": x}, {"dtype": convert_dtype(dtype)})
    return outs["Out"][0], outs["Index"][0], outs["Count"][0]


def shard_index(input, index_num, nshards, shard_id, ignore_value=-1):
    if shard_id < 0 or shard_id >= nshards:
        raise ValueError("shard_index: shard_id (%d) must be in [0, %d)" % (shard_id, nshards))
    return single(append_defined("shard_index", {"X": input}, {"index_num": index_num, "nshards": nshards,
                                                             "shard_id": shard_id, "ignore_value": ignore_value},
                                 stop_gradient=True))


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    check_variable(x, "x", "scale")
    helper = LayerHelper("scale", name=name, act=act)
    out = single(append_defined("scale", {"X": x}, {"scale": float(scale), "bias": float(bias),
                                                    "bias_after_scale": bias_after_scale}, helper=helper))
    return helper.append_activation(out)


def clip(x, min, max, name=None):
    return single(append_defined("clip", {"X": x}, {"min": float(min), "max": float(max)}, name=name))


def clip_by_norm(x, max_norm, name=None):
    return single(append_defined("clip_by_norm", {"X": x}, {"max_norm": float(max_norm)}, name=name))


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


def _logical(op_type, binary=True):
    def layer(x, y=None, out=None, name=None):
        helper = LayerHelper(op_type, name=name)
        if out is None:
            out = out_var(helper, "bool", stop_gradient=True)
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


def label_smooth(label, prior_dist=None, epsilon=0.1, dtype="float32", name=None):
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError("label_smooth: epsilon must be in [0, 1], got %s" % epsilon)
    helper = LayerHelper("label_smooth", name=name)
    out = out_var(helper, dtype)
    inputs = {"X": [label]}
    if prior_dist is not None:
        inputs["PriorDist"] = [prior_dist]
    helper.append_op(type="label_smooth", inputs=inputs, outputs={"Out": [out]}, attrs={"epsilon": float(epsilon)})
    return out


def cos_sim(X, Y):
    """Cosine similarity of the rows of X and Y ([N, 1]); Y may be one row."""
    check_variable(X, "X", "cos_sim")
    check_variable(Y, "Y", "cos_sim")
    return append_defined("cos_sim", {"X": X, "Y": Y})["Out"][0]
