"""layer_norm (batch_norm lives with the other nn layers)."""

import functools
import operator

from ..initializer import Constant
from ..layer_helper import LayerHelper
from .helpers import check_variable, out_var

__all__ = ["layer_norm"]


def layer_norm(input, scale=True, shift=True, begin_norm_axis=1, epsilon=1e-05, param_attr=None, bias_attr=None,
               act=None, name=None):
    check_variable(input, "input", "layer_norm")
    helper = LayerHelper("layer_norm", param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    dtype = input.dtype
    norm_shape = list(input.shape[begin_norm_axis:])
    if any(d < 0 for d in norm_shape):
        raise ValueError("layer_norm: dims %s of %s from begin_norm_axis=%d must be known"
                         % (norm_shape, input.name, begin_norm_axis))
    size = functools.reduce(operator.mul, norm_shape, 1)
    inputs = {"X": [input]}
    if scale:
        inputs["Scale"] = [helper.create_parameter(attr=helper.param_attr, shape=[size], dtype=dtype,
                                                   default_initializer=Constant(1.0))]
    if shift:
        inputs["Bias"] = [helper.create_parameter(attr=helper.bias_attr, shape=[size], dtype=dtype, is_bias=True)]
    rows = list(input.shape[:begin_norm_axis])
    mean = out_var(helper, dtype, rows, stop_gradient=True)
    var = out_var(helper, dtype, rows, stop_gradient=True)
    out = out_var(helper, dtype, input.shape, input.lod_level)
    helper.append_op(type="layer_norm", inputs=inputs, outputs={"Y": [out], "Mean": [mean], "Variance": [var]},
                     attrs={"epsilon": float(epsilon), "begin_norm_axis": begin_norm_axis})
    return helper.append_activation(out)
