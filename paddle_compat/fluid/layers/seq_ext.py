"""Sequence layers whose ops live in paddle_compat/ops/defs/seq_ext.py (sequence_conv, cos_sim) and
seq_shape.py (sequence_reverse, sequence_pad, sequence_unpad, sequence_expand_as, sequence_mask).
Paddle 1.8's signatures, parameter shapes, op types and attributes."""

from ..layer_helper import LayerHelper
from .helpers import append_defined, check_variable
from ...ir import Variable, convert_dtype

__all__ = ["sequence_conv", "cos_sim", "sequence_reverse", "sequence_pad", "sequence_unpad", "sequence_expand_as",
           "sequence_mask"]


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


def _need_lod(x, arg, layer):
    check_variable(x, arg, layer)
    if x.lod_level < 1:
        raise ValueError("%s: '%s' (%s) has lod_level=0; declare its data with lod_level=1" % (layer, arg, x.name))


def sequence_reverse(x, name=None):
    """Each sequence's rows in reverse order (same LoD)."""
    _need_lod(x, "x", "sequence_reverse")
    return append_defined("sequence_reverse", {"X": x}, name=name)["Y"][0]


def sequence_pad(x, pad_value, maxlen=None, name=None):
    """LoD [T, ...] -> ([N, maxlen, ...] padded with pad_value, lengths [N] int64)."""
    _need_lod(x, "x", "sequence_pad")
    check_variable(pad_value, "pad_value", "sequence_pad")
    pad_value.stop_gradient = True
    outs = append_defined("sequence_pad", {"X": x, "PadValue": pad_value},
                          {"padded_length": -1 if maxlen is None else int(maxlen)}, name=name)
    length = outs["Length"][0]
    length.stop_gradient = True
    return outs["Out"][0], length


def sequence_unpad(x, length, name=None):
    """[N, T, ...] and lengths [N] -> the LoD tensor of the first length[i] rows of each x[i]."""
    check_variable(x, "x", "sequence_unpad")
    check_variable(length, "length", "sequence_unpad")
    length.stop_gradient = True
    return append_defined("sequence_unpad", {"X": x, "Length": length}, name=name)["Out"][0]


def sequence_expand_as(x, y, name=None):
    """Row i of x repeated len(sequence i of y) times; the result has y's LoD."""
    check_variable(x, "x", "sequence_expand_as")
    _need_lod(y, "y", "sequence_expand_as")
    return append_defined("sequence_expand_as", {"X": x, "Y": y}, name=name)["Out"][0]


def sequence_mask(x, maxlen=None, dtype='int64', name=None):
    """[..., maxlen] mask of j < x[...] (maxlen None: the largest x), in dtype."""
    check_variable(x, "x", "sequence_mask")
    inputs, attrs = {"X": x}, {"out_dtype": int(convert_dtype(dtype))}
    if isinstance(maxlen, Variable):
        inputs["MaxLenTensor"] = maxlen
    elif maxlen is not None:
        attrs["maxlen"] = int(maxlen)
    return append_defined("sequence_mask", inputs, attrs, name=name, stop_gradient=True)["Y"][0]
