"""Sequence layers whose ops live in paddle_compat/ops/defs/seq_ext.py: sequence_conv, cos_sim.
Paddle 1.8's signatures, parameter shapes, op types and attributes."""

from ..layer_helper import LayerHelper
from .helpers import append_defined, check_variable

__all__ = ["sequence_conv", "cos_sim"]


def sequence_conv(input, num_filters, filter_size=3, filter_stride=1, padding=True, padding_start=None,
                  bias_attr=None, param_attr=None, act=None, name=None):
    """Context convolution over each sequence of a LoD input: [T, D] -> [T, num_filters]."""
    check_variable(input, "input", "sequence_conv")
    if input.lod_level < 1:
        raise ValueError("sequence_conv: 'input' (%s) has lod_level=0; declare its data with lod_level=1"
                         % input.name)
    helper = LayerHelper("sequence_conv", param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    w = helper.create_parameter(attr=helper.param_attr, shape=[filter_size * input.shape[1], num_filters],
                                dtype=input.dtype)
    if padding_start is None:
        padding_start = -int(filter_size // 2)
    attrs = {"contextStride": filter_stride, "contextStart": padding_start, "contextLength": filter_size}
    pre_bias = append_defined("sequence_conv", {"X": input, "Filter": w}, attrs, helper=helper)["Out"][0]
    return helper.append_activation(helper.append_bias_op(pre_bias))


def cos_sim(X, Y):
    """Cosine similarity of the rows of X and Y ([N, 1]); Y may be one row."""
    check_variable(X, "X", "cos_sim")
    check_variable(Y, "Y", "cos_sim")
    return append_defined("cos_sim", {"X": X, "Y": Y})["Out"][0]
