"""Math and tensor layers of Paddle 1.8 whose ops are defined in paddle_compat/ops/defs (math_more.py,
index_ops.py). Signatures and defaults follow Paddle 1.8's fluid.layers."""

import sys

from ...ir import Variable, convert_dtype
from ..layer_helper import LayerHelper
from .helpers import append_defined, check_variable, out_var, single
from .nn import reshape, transpose
from .ops import elementwise_add, elementwise_mul, equal, exp, log, reduce_sum
from .tensor import assign, cast, fill_constant, slice
import numpy as np

__all__ = ["log1p", "logsumexp", "clamp", "addmm", "addcmul", "bmm", "nonzero", "index_select", "dist", "dot", "t",
           "cross", "diag_embed", "meshgrid", "reduce_all", "reduce_any", "multiplex", "argsort", "reverse",
           "has_inf", "has_nan", "isfinite", "linspace", "full_like", "diag", "eye", "kron", "arange", "full",
           "tril", "triu", "trace", "where", "unique", "unique_with_counts", "flip", "roll", "log_softmax",
           "index_sample", "allclose", "elementwise_equal", "sum", "rank", "size", "shard_index", "atan",
           "tanh_shrink", "acos", "asin", "softshrink", "hard_shrink", "thresholded_relu", "erf", "stanh", "brelu",
           "soft_relu", "selu", "hard_swish", "mish"]


def _act(op_type, x, attrs=None, name=None):
    check_variable(x, "x", op_type)
    return single(append_defined(op_type, {"X": x}, attrs, name=name))


def log1p(x, out=None, name=None):
    return _act("log1p", x, name=name)


def atan(x, name=None):
    return _act("atan", x, name=name)


def acos(x, name=None):
    return _act("acos", x, name=name)


def asin(x, name=None):
    return _act("asin", x, name=name)


def tanh_shrink(x, name=None):
    return _act("tanh_shrink", x, name=name)


def erf(x):
    return _act("erf", x)


def softshrink(x, alpha=None):
    return _act("softshrink", x, {} if alpha is None else {"lambda": float(alpha)})


def hard_shrink(x, threshold=None):
    return _act("hard_shrink", x, {} if threshold is None else {"threshold": float(threshold)})


def thresholded_relu(x, threshold=None):
    return _act("thresholded_relu", x, {} if threshold is None else {"threshold": float(threshold)})


def stanh(x, scale_a=0.67, scale_b=1.7159, name=None):
    return _act("stanh", x, {"scale_a": scale_a, "scale_b": scale_b}, name)


def brelu(x, t_min=0.0, t_max=24.0, name=None):
    return _act("brelu", x, {"t_min": t_min, "t_max": t_max}, name)


def soft_relu(x, threshold=40.0, name=None):
    return _act("soft_relu", x, {"threshold": threshold}, name)


def selu(x, scale=None, alpha=None, name=None):
    attrs = {}
    if scale is not None:
        attrs["scale"] = scale
    if alpha is not None:
        attrs["alpha"] = alpha
    return _act("selu", x, attrs, name)


def hard_swish(x, threshold=6.0, scale=6.0, offset=3.0, name=None):
    return _act("hard_swish", x, {"threshold": threshold, "scale": scale, "offset": offset}, name)


def mish(x, threshold=20, name=None):
    return _act("mish", x, {"threshold": threshold}, name)


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
    out = output or out_var(helper, input.dtype, input.shape, input.lod_level)
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


def kron(x, y, out=None, name=None):
    return single(append_defined("kron", {"X": x, "Y": y}, name=name))


def trace(input, offset=0, dim1=0, dim2=1, out=None, name=None):
    return single(append_defined("trace", {"Input": input}, {"offset": offset, "dim1": dim1, "dim2": dim2},
                                 name=name))


def tril(input, diagonal=0, name=None):
    return single(append_defined("tril_triu", {"X": input}, {"diagonal": diagonal, "lower": True}, name=name,
                                 helper=LayerHelper("tril", name=name)))


def triu(input, diagonal=0, name=None):
    return single(append_defined("tril_triu", {"X": input}, {"diagonal": diagonal, "lower": False}, name=name,
                                 helper=LayerHelper("triu", name=name)))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    if not isinstance(input, Variable):
        input = assign(input)
    return single(append_defined("diag_embed", {"Input": input}, {"offset": offset, "dim1": dim1, "dim2": dim2},
                                 stop_gradient=True))


def diag(diagonal):
    if not isinstance(diagonal, Variable):
        diagonal = assign(diagonal)
    return single(append_defined("diag", {"Diagonal": diagonal}, stop_gradient=True))


def eye(num_rows, num_columns=None, batch_shape=None, dtype="float32"):
    from .nn import stack
    if not isinstance(num_rows, int) or num_rows < 0:
        raise TypeError("eye: num_rows must be a non-negative int, got %r" % (num_rows,))
    num_columns = num_rows if num_columns is None else num_columns
    out = single(append_defined("eye", {}, {"num_rows": num_rows, "num_columns": num_columns,
                                            "dtype": convert_dtype(dtype)}, stop_gradient=True))
    for b in reversed(batch_shape or []):
        out = stack([out] * b, axis=0)
    return out


def linspace(start, stop, num, dtype):
    ins = {"Start": start if isinstance(start, Variable) else fill_constant([1], dtype, start),
           "Stop": stop if isinstance(stop, Variable) else fill_constant([1], dtype, stop),
           "Num": num if isinstance(num, Variable) else fill_constant([1], "int32", num)}
    helper = LayerHelper("linspace")
    n = num if isinstance(num, int) else -1
    out = out_var(helper, ins["Start"].dtype, (n,))
    helper.append_op(type="linspace", inputs={k: [v] for k, v in ins.items()}, outputs={"Out": [out]})
    return out


def arange(start, end, step=1, dtype=None, name=None):
    from .tensor import range as range_
    return range_(start, end, step, "float32" if dtype is None else dtype)


def full(shape, fill_value, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    out = fill_constant(shape=shape, dtype="float32" if dtype is None else dtype, value=fill_value, out=out)
    out.stop_gradient = stop_gradient
    return out


def full_like(input, fill_value, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    helper = LayerHelper("full_like", name=name)
    dt = input.dtype if dtype is None else convert_dtype(dtype)
    out = out or out_var(helper, dt, input.shape)
    helper.append_op(type="fill_any_like", inputs={"X": [input]}, outputs={"Out": [out]},
                     attrs={"value": fill_value, "dtype": dt})
    if dt != input.dtype:
        out = cast(out, dt)      # our fill_any_like kernel keeps X's dtype
    out.stop_gradient = stop_gradient
    return out


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


def has_inf(x):
    return single(append_defined("isinf", {"X": x}))


def has_nan(x):
    return single(append_defined("isnan", {"X": x}))


def isfinite(x):
    return single(append_defined("isfinite", {"X": x}))


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
    from .tensor import sums
    return sums(list(x) if isinstance(x, (list, tuple)) else [x])


def multiplex(inputs, index):
    if len(inputs) < 2:
        raise ValueError("multiplex: inputs must be a list of at least 2 Variables, got %d" % len(inputs))
    return single(append_defined("multiplex", {"X": list(inputs), "Ids": index}))


def meshgrid(input, name=None):
    if not isinstance(input, list):
        raise TypeError("meshgrid: input must be a list of Variables, got %s" % type(input).__name__)
    return append_defined("meshgrid", {"X": input}, name=name)["Out"]


def argsort(input, axis=-1, descending=False, name=None):
    outs = append_defined("argsort", {"X": input}, {"axis": axis, "descending": descending}, name=name,
                          stop_gradient=True)
    return outs["Out"][0], outs["Indices"][0]


def reverse(x, axis):
    return single(append_defined("reverse", {"X": x}, {"axis": [axis] if isinstance(axis, int) else list(axis)}))


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


def log_softmax(input, axis=None, dtype=None, name=None):
    from .nn import softmax
    if dtype is not None:
        input = cast(input, dtype)
    return log(softmax(input, axis=-1 if axis is None else axis), name)


def shard_index(input, index_num, nshards, shard_id, ignore_value=-1):
    if shard_id < 0 or shard_id >= nshards:
        raise ValueError("shard_index: shard_id (%d) must be in [0, %d)" % (shard_id, nshards))
    return single(append_defined("shard_index", {"X": input}, {"index_num": index_num, "nshards": nshards,
                                                             "shard_id": shard_id, "ignore_value": ignore_value},
                                 stop_gradient=True))
