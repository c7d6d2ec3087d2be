"""Tensor-creation and data-movement layers."""

import numpy as np

from ...ir import VarType, Variable, convert_dtype, unique_name
from ..initializer import Constant
from ..layer_helper import LayerHelper
from .helpers import append_defined, check_variable, out_var, single

__all__ = ["fill_constant", "fill_constant_batch_size_like", "assign", "cast", "concat", "sums",
           "create_parameter", "create_global_var", "create_tensor", "zeros", "ones", "argmax", "argmin",
           "increment", "shape", "zeros_like", "ones_like", "range", "slice", "pad"]


def fill_constant(shape, dtype, value, force_cpu=False, out=None):
    helper = LayerHelper("fill_constant")
    inputs = {}
    if isinstance(shape, Variable):
        # the whole shape at run time: an int32/int64 1-D tensor
        inputs["ShapeTensor"] = [_int32_dim(shape, "shape")]
        attr_shape = [-1] * max(int(shape.shape[0]) if shape.shape else 1, 1)
    elif isinstance(shape, (list, tuple)):
        if not shape:
            raise ValueError("fill_constant: shape must not be empty")
        attr_shape = [-1 if isinstance(d, Variable) else int(d) for d in shape]
        if any(isinstance(d, Variable) for d in shape):
            # some dims known only at run time (e.g. shape(x)[0]): one [1] int32 tensor per dim
            inputs["ShapeTensorList"] = [
                _int32_dim(d, "shape[%d]" % i) if isinstance(d, Variable)
                else fill_constant([1], "int32", int(d), force_cpu=True) for i, d in enumerate(shape)]
    else:
        raise TypeError("fill_constant: shape must be a list, tuple or Variable, got %r" % (shape,))
    if out is None:
        out = out_var(helper, dtype, attr_shape, stop_gradient=True)
    helper.append_op(type="fill_constant", inputs=inputs, outputs={"Out": [out]},
                     attrs={"shape": attr_shape, "dtype": int(convert_dtype(dtype)),
                            "value": float(value), "str_value": str(float(value)), "force_cpu": force_cpu})
    out.stop_gradient = True
    return out


def _int32_dim(v, what):
    if v.dtype not in (VarType.INT32, VarType.INT64):
        raise TypeError("fill_constant: %s must be an int32 or int64 Variable, got '%s' of dtype %s"
                        % (what, v.name, v.dtype))
    v.stop_gradient = True
    return cast(v, "int32") if v.dtype == VarType.INT64 else v


def fill_constant_batch_size_like(input, shape, dtype, value, input_dim_idx=0, output_dim_idx=0):
    helper = LayerHelper("fill_constant_batch_size_like")
    out_shape = list(shape)
    out_shape[output_dim_idx] = input.shape[input_dim_idx]
    out = out_var(helper, dtype, out_shape, stop_gradient=True)
    helper.append_op(type="fill_constant_batch_size_like", inputs={"Input": [input]}, outputs={"Out": [out]},
                     attrs={"shape": list(shape), "dtype": int(convert_dtype(dtype)), "value": float(value),
                            "input_dim_idx": input_dim_idx, "output_dim_idx": output_dim_idx})
    return out


def assign(input, output=None):
    helper = LayerHelper("assign")
    if isinstance(input, Variable):
        if output is None:
            output = out_var(helper, input.dtype, input.shape, input.lod_level)
        helper.append_op(type="assign", inputs={"X": [input]}, outputs={"Out": [output]})
        return output
    if isinstance(input, np.ndarray):
        dt = convert_dtype(input.dtype)
        if output is None:
            output = out_var(helper, dt, input.shape)
        if dt == VarType.FP32 or dt == VarType.FP64:
            key, values = "fp32_values", input.astype(np.float32).reshape(-1)
            dt = VarType.FP32
        elif dt == VarType.INT32 or dt == VarType.BOOL:
            key, values = "int32_values", input.astype(np.int32).reshape(-1)
        elif dt == VarType.INT64:
            key, values = "int64_values", input.astype(np.int64).reshape(-1)
        else:
            raise TypeError("assign: unsupported numpy dtype %s" % input.dtype)
        helper.append_op(type="assign_value", outputs={"Out": [output]},
                         attrs={"dtype": int(dt), "shape": list(input.shape), key: values})
        return output
    raise TypeError("assign: input must be a Variable or numpy.ndarray, got %s" % type(input).__name__)


def cast(x, dtype):
    check_variable(x, "x", "cast")
    return single(append_defined("cast", {"X": x}, {"in_dtype": int(convert_dtype(x.dtype)),
                                                    "out_dtype": int(convert_dtype(dtype))}))


def concat(input, axis=0, name=None):
    if not isinstance(input, (list, tuple)) or not input:
        raise TypeError("concat: input must be a non-empty list of Variables")
    return single(append_defined("concat", {"X": list(input)}, {"axis": axis}, name=name))


def sums(input, out=None):
    helper = LayerHelper("sum")
    if out is None:
        out = out_var(helper, input[0].dtype, input[0].shape, input[0].lod_level)
    helper.append_op(type="sum", inputs={"X": list(input)}, outputs={"Out": [out]}, attrs={"use_mkldnn": False})
    return out


def create_parameter(shape, dtype, name=None, attr=None, is_bias=False, default_initializer=None):
    from ..param_attr import ParamAttr
    helper = LayerHelper("create_parameter")
    if attr is None:
        attr = ParamAttr(name=name)
    return helper.create_parameter(attr, shape, dtype, is_bias, default_initializer)


def create_global_var(shape, value, dtype, persistable=False, force_cpu=False, name=None):
    helper = LayerHelper("global_var")
    var = helper.create_global_variable(dtype=dtype, shape=shape, persistable=persistable,
                                        name=name or unique_name.generate("global_var"), stop_gradient=True)
    helper.set_variable_initializer(var, initializer=Constant(value=float(value), force_cpu=force_cpu))
    return var


def create_tensor(dtype, name=None, persistable=False):
    helper = LayerHelper("create_tensor", name=name)
    return helper.create_variable(name=helper.name, dtype=dtype, persistable=persistable)


def zeros(shape, dtype, force_cpu=False):
    return fill_constant(shape, dtype, 0.0, force_cpu)


def ones(shape, dtype, force_cpu=False):
    return fill_constant(shape, dtype, 1.0, force_cpu)


def _arg(op_type, x, axis):
    helper = LayerHelper(op_type)
    nd = len(x.shape)
    ax = axis + nd if axis < 0 else axis
    out = out_var(helper, "int64", [d for i, d in enumerate(x.shape) if i != ax] or [1], stop_gradient=True)
    helper.append_op(type=op_type, inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"axis": axis})
    return out


def argmax(x, axis=0):
    return _arg("arg_max", x, axis)


def argmin(x, axis=0):
    return _arg("arg_min", x, axis)


def increment(x, value=1.0, in_place=True):
    helper = LayerHelper("increment")
    out = x if in_place else out_var(helper, x.dtype, x.shape)
    helper.append_op(type="increment", inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"step": float(value)})
    return out


def shape(input):
    helper = LayerHelper("shape")
    out = out_var(helper, "int32", [len(input.shape)], stop_gradient=True)
    helper.append_op(type="shape", inputs={"Input": [input]}, outputs={"Out": [out]})
    return out


def zeros_like(x, out=None):
    helper = LayerHelper("zeros_like")
    out = out or out_var(helper, x.dtype, x.shape, stop_gradient=True)
    helper.append_op(type="fill_zeros_like", inputs={"X": [x]}, outputs={"Out": [out]})
    return out


def ones_like(x, out=None):
    helper = LayerHelper("ones_like")
    out = out or out_var(helper, x.dtype, x.shape, stop_gradient=True)
    helper.append_op(type="fill_any_like", inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"value": 1.0})
    return out


def range(start, end, step, dtype):
    helper = LayerHelper("range")
    ins = {}
    for k, v in (("Start", start), ("End", end), ("Step", step)):
        ins[k] = [v if isinstance(v, Variable) else fill_constant([1], dtype, v)]
    n = -1
    if not any(isinstance(v, Variable) for v in (start, end, step)):
        n = len(np.arange(start, end, step))
    out = out_var(helper, dtype, [n], stop_gradient=True)
    helper.append_op(type="range", inputs=ins, outputs={"Out": [out]})
    return out


def slice(input, axes, starts, ends):
    """input[starts[i]:ends[i]] along axes[i] (negative indices and out-of-range ends clamp, as in Paddle)."""
    if not (len(axes) == len(starts) == len(ends)):
        raise ValueError("slice: axes, starts and ends must have the same length")
    return single(append_defined("slice", {"Input": input},
                                 {"axes": list(axes), "starts": list(starts), "ends": list(ends)}))


def pad(x, paddings, pad_value=0.0, name=None):
    """paddings = [before_0, after_0, before_1, after_1, ...] for every dim of x."""
    if len(paddings) != 2 * len(x.shape):
        raise ValueError("pad: paddings needs 2 numbers per dim of %s (%d), got %d"
                         % (x.name, len(x.shape), len(paddings)))
    return single(append_defined("pad", {"X": x}, {"paddings": list(paddings), "pad_value": float(pad_value)},
                                 name=name))
