"""Sequence layers whose ops live in paddle_compat/ops/defs/seq_more.py: sequence_slice, sequence_reshape,
sequence_scatter, sequence_enumerate, row_conv, im2sequence. Paddle 1.8's signatures, op types and attributes."""

from ..layer_helper import LayerHelper
from .beam_decode import _check_dtype
from .helpers import append_defined, check_variable

__all__ = ["sequence_slice", "sequence_reshape", "sequence_scatter", "sequence_enumerate", "row_conv",
           "im2sequence"]

_NUM = ("float32", "float64", "int32", "int64")


def sequence_slice(input, offset, length, name=None):
    """Sequence i keeps length[i] rows from row offset[i] of it."""
    _check_dtype(input, "input", "sequence_slice", _NUM)
    _check_dtype(offset, "offset", "sequence_slice", ("int32", "int64"))
    _check_dtype(length, "length", "sequence_slice", ("int32", "int64"))
    offset.stop_gradient = True
    length.stop_gradient = True
    return append_defined("sequence_slice", {"X": input, "Offset": offset, "Length": length}, name=name)["Out"][0]


def sequence_reshape(input, new_dim):
    """Each sequence's values re-cut into rows of width new_dim (the LoD scales accordingly)."""
    _check_dtype(input, "input", "fluid.layers.sequence_reshape", _NUM)
    return append_defined("sequence_reshape", {"X": input}, {"new_dim": int(new_dim)})["Out"][0]


def sequence_scatter(input, index, updates, name=None):
    """input with updates added at columns index of row i, for each sequence i of index."""
    _check_dtype(input, "input", "sequence_scatter", _NUM)
    _check_dtype(index, "index", "sequence_scatter", ("int32", "int64"))
    _check_dtype(updates, "updates", "sequence_scatter", _NUM)
    return append_defined("sequence_scatter", {"X": input, "Ids": index, "Updates": updates}, name=name)["Out"][0]


def sequence_enumerate(input, win_size, pad_value=0, name=None):
    """Row t: the win_size ids from t on within its sequence, pad_value past its end."""
    _check_dtype(input, "input", "sequence_enumerate", ("int32", "int64"))
    return append_defined("sequence_enumerate", {"X": input}, {"win_size": int(win_size), "pad_value": int(pad_value)},
                          name=name, stop_gradient=True)["Out"][0]


def row_conv(input, future_context_size, param_attr=None, act=None):
    """Lookahead convolution over each sequence with a [future_context_size + 1, width] filter."""
    _check_dtype(input, "input", "row_conv", ("float32",))
    helper = LayerHelper("row_conv", param_attr=param_attr, act=act)
    w = helper.create_parameter(attr=helper.param_attr, shape=[future_context_size + 1, input.shape[-1]],
                                dtype=input.dtype)
    out = append_defined("row_conv", {"X": input, "Filter": w}, helper=helper)["Out"][0]
    return helper.append_activation(out)


def im2sequence(input, filter_size=1, stride=1, padding=0, input_image_size=None, out_stride=1, name=None):
    """[N, C, H, W] -> one sequence per image of its filter_size patches, [N * oh * ow, C * kh * kw]."""
    _check_dtype(input, "input", "im2sequence", ("float32",))
    filter_size = [filter_size] * 2 if isinstance(filter_size, int) else list(filter_size)
    stride = [stride] * 2 if isinstance(stride, int) else list(stride)
    padding = [padding] * 2 if isinstance(padding, int) else list(padding)
    if len(padding) == 2:
        padding = padding + padding
    inputs, attrs = {"X": input}, {"kernels": filter_size, "strides": stride, "paddings": padding}
    if input_image_size is not None:
        check_variable(input_image_size, "input_image_size", "im2sequence")
        inputs["Y"] = input_image_size
        attrs["out_stride"] = [out_stride] * 2 if isinstance(out_stride, int) else list(out_stride)
    return append_defined("im2sequence", inputs, attrs, name=name)["Out"][0]
