"""Shared pieces of the layer builders (Paddle keeps its helpers in fluid/layers/utils.py)."""

from ...ir import VarType, Variable, convert_dtype, dtype_name
from ...ops import get as get_def
from ..layer_helper import LayerHelper
# Paddle's layers/utils.py also holds its nested-structure helpers (the RNN APIs' tests call them from here)
from .nest import assert_same_structure, flatten, is_sequence, map_structure, pack_sequence_as  # noqa: F401


def out_var(helper, dtype, shape=(), lod_level=0, stop_gradient=False):
    """An op's output variable. Leave `shape` out when the op's declaration has an infer_shape: Block.append_op
    then gives the variable that shape (as Paddle 1.8's Operator ran InferShape)."""
    return helper.create_variable_for_type_inference(dtype=dtype, shape=tuple(shape), lod_level=lod_level,
                                                     stop_gradient=stop_gradient)


def check_variable(x, arg, layer):
    if not isinstance(x, Variable):
        raise TypeError("%s: '%s' must be a Variable, got %s" % (layer, arg, type(x).__name__))


def as_list(v, n, what):
    if isinstance(v, int):
        return [v] * n
    v = list(v)
    if len(v) != n:
        raise ValueError("%s must be an int or a list of %d ints, got %s" % (what, n, v))
    return v


def append_defined(op_type, inputs, attrs=None, name=None, helper=None, stop_gradient=False):
    """Append an op whose output shapes come from its definition in paddle_compat/ops.

    inputs: {slot: Variable or [Variable]} (None values left out). Returns the outputs as
    {slot: [Variable]}; `single(...)` below unwraps the common one-output case. No shape code is
    needed in the layer builder: the op's `infer_shape` is the one place that knows. stop_gradient:
    True for every output, or the output slots that carry no gradient (a dropout mask, pooling indices).
    """
    d = get_def(op_type)
    if d.infer_shape is None:
        raise NotImplementedError("op '%s' has no infer_shape in its definition (%s)" % (op_type, d.where))
    ins = {}
    for slot, v in inputs.items():
        if v is None:
            continue
        ins[slot] = list(v) if isinstance(v, (list, tuple)) else [v]
    attrs = dict(attrs or {})
    metas = d.infer_shape(ins, attrs)
    helper = helper or LayerHelper(op_type, name=name)
    outs = {}
    for slot, m in metas.items():
        ms = m if isinstance(m, (list, tuple)) else [m]
        stop = stop_gradient if isinstance(stop_gradient, bool) else slot in stop_gradient
        # the shapes: Block.append_op runs infer_shape again and gives them to the variables
        outs[slot] = [out_var(helper, mm.dtype, lod_level=mm.lod_level, stop_gradient=stop) for mm in ms]
    helper.append_op(type=op_type, inputs=ins, outputs=outs, attrs=attrs)
    return outs


def single(outs, slot="Out"):
    return outs[slot][0]


def unary_defined(op_type, x, attrs=None, name=None):
    check_variable(x, "x", op_type)
    return single(append_defined(op_type, {"X": x}, attrs, name=name))


def check_dtype(x, arg, layer, allowed):
    check_variable(x, arg, layer)
    if dtype_name(convert_dtype(x.dtype)) not in allowed:
        raise TypeError("%s: '%s' (%s) must be of dtype %s, got %s"
                        % (layer, arg, x.name, " or ".join(allowed), dtype_name(convert_dtype(x.dtype))))


def check_array(array, layer):
    if not isinstance(array, Variable) or array.type != VarType.LOD_TENSOR_ARRAY:
        raise TypeError("%s: array must be a LoDTensorArray variable (fluid.layers.create_array), got %r"
                        % (layer, array))
