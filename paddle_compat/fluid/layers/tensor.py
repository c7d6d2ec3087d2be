"""Paddle's fluid.layers.tensor: creating, filling, casting, concatenating and arranging tensors."""

import numpy as np

from ...ir import VarType, Variable, convert_dtype, unique_name
from ..initializer import Constant, Initializer
from ..param_attr import ParamAttr
from ..layer_helper import LayerHelper
from .arg_checks import check_dtype, check_shape_items, check_type
from .utils import append_defined, check_array, check_variable, out_var, single

__all__ = ["tensor_array_to_tensor", "kron", "trace", "tril", "triu", "diag", "eye", "linspace", "arange", "full",
           "full_like", "has_inf", "has_nan", "isfinite", "argsort", "reverse", "fill_constant",
           "fill_constant_batch_size_like", "assign", "cast", "concat", "sums", "create_parameter",
           "create_global_var", "create_tensor", "zeros", "ones", "argmax", "argmin", "zeros_like", "ones_like",
           "range"]


def tensor_array_to_tensor(input, axis=1, name=None, use_stack=False):
    """The elements of a LoDTensorArray concatenated (use_stack: stacked) along axis, and each one's size
    along it (int32)."""
    check_array(input, "tensor_array_to_tensor")
    outs = append_defined("tensor_array_to_tensor", {"X": input}, {"axis": int(axis), "use_stack": bool(use_stack)},
                          name=name)
    outs["OutIndex"][0].stop_gradient = True
    return outs["Out"][0], outs["OutIndex"][0]


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


def diag(diagonal):
    if not isinstance(diagonal, Variable):
        diagonal = assign(diagonal)
    return single(append_defined("diag", {"Diagonal": diagonal}, stop_gradient=True))


def eye(num_rows, num_columns=None, batch_shape=None, dtype="float32"):
    if not isinstance(num_rows, int) or num_rows < 0:
        raise TypeError("eye: num_rows must be a non-negative int, got %r" % (num_rows,))
    num_columns = num_rows if num_columns is None else num_columns
    out = single(append_defined("eye", {}, {"num_rows": num_rows, "num_columns": num_columns,
                                            "dtype": convert_dtype(dtype)}, stop_gradient=True))
    for b in reversed(batch_shape or []):
        out = single(append_defined("stack", {"X": [out] * b}, {"axis": 0}), "Y")   # layers.stack
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
    return range(start, end, step, "float32" if dtype is None else dtype)


def full(shape, fill_value, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    out = fill_constant(shape=shape, dtype="float32" if dtype is None else dtype, value=fill_value, out=out)
    out.stop_gradient = stop_gradient
    return out


def full_like(input, fill_value, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    helper = LayerHelper("full_like", name=name)
    dt = input.dtype if dtype is None else convert_dtype(dtype)
    out = out or out_var(helper, dt)
    helper.append_op(type="fill_any_like", inputs={"X": [input]}, outputs={"Out": [out]},
                     attrs={"value": fill_value, "dtype": dt})
    if dt != input.dtype:
        out = cast(out, dt)      # our fill_any_like kernel keeps X's dtype
    out.stop_gradient = stop_gradient
    return out


def has_inf(x):
    return single(append_defined("isinf", {"X": x}))


def has_nan(x):
    return single(append_defined("isnan", {"X": x}))


def isfinite(x):
    return single(append_defined("isfinite", {"X": x}))


def argsort(input, axis=-1, descending=False, name=None):
    outs = append_defined("argsort", {"X": input}, {"axis": axis, "descending": descending}, name=name,
                          stop_gradient=True)
    return outs["Out"][0], outs["Indices"][0]


def reverse(x, axis):
    return single(append_defined("reverse", {"X": x}, {"axis": [axis] if isinstance(axis, int) else list(axis)}))


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
        out = out_var(helper, dtype, stop_gradient=True)
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
    out = out_var(helper, dtype, stop_gradient=True)
    helper.append_op(type="fill_constant_batch_size_like", inputs={"Input": [input]}, outputs={"Out": [out]},
                     attrs={"shape": list(shape), "dtype": int(convert_dtype(dtype)), "value": float(value),
                            "input_dim_idx": input_dim_idx, "output_dim_idx": output_dim_idx})
    return out


def assign(input, output=None):
    helper = LayerHelper("assign")
    if isinstance(input, Variable):
        if output is None:
            output = out_var(helper, input.dtype, lod_level=input.lod_level)
        helper.append_op(type="assign", inputs={"X": [input]}, outputs={"Out": [output]})
        return output
    if isinstance(input, np.ndarray):
        dt = convert_dtype(input.dtype)
        if output is None:
            output = out_var(helper, dt)
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
        out = out_var(helper, input[0].dtype, lod_level=input[0].lod_level)
    helper.append_op(type="sum", inputs={"X": list(input)}, outputs={"Out": [out]}, attrs={"use_mkldnn": False})
    return out


_PARAM_DTYPES = ("bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8")


def create_parameter(shape, dtype, name=None, attr=None, is_bias=False, default_initializer=None):
    check_shape_items(shape, "create_parameter")
    check_dtype(dtype, "dtype", _PARAM_DTYPES, "create_parameter")
    check_type(attr, "attr", (type(None), ParamAttr), "create_parameter")
    check_type(default_initializer, "default_initializer", (type(None), Initializer), "create_parameter")
    helper = LayerHelper("create_parameter")
    if attr is None:
        attr = ParamAttr(name=name)
    return helper.create_parameter(attr, shape, dtype, is_bias, default_initializer)


def create_global_var(shape, value, dtype, persistable=False, force_cpu=False, name=None):
    check_shape_items(shape, "create_global_var")
    check_dtype(dtype, "dtype", _PARAM_DTYPES, "create_global_var")
    helper = LayerHelper("global_var")
    var = helper.create_global_variable(dtype=dtype, shape=shape, persistable=persistable,
                                        name=name or unique_name.generate("global_var"), stop_gradient=True)
    if isinstance(value, np.ndarray) and value.size == 1:   # NumPy 2 refuses float() of a shape-[1] array
        value = value.item()
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
    out = out_var(helper, "int64", stop_gradient=True)
    helper.append_op(type=op_type, inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"axis": axis})
    return out


def argmax(x, axis=0):
    return _arg("arg_max", x, axis)


def argmin(x, axis=0):
    return _arg("arg_min", x, axis)


def zeros_like(x, out=None):
    helper = LayerHelper("zeros_like")
    out = out or out_var(helper, x.dtype, stop_gradient=True)
    helper.append_op(type="fill_zeros_like", inputs={"X": [x]}, outputs={"Out": [out]})
    return out


def ones_like(x, out=None):
    helper = LayerHelper("ones_like")
    out = out or out_var(helper, x.dtype, stop_gradient=True)
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
