"""Paddle's fluid.layers.sequence_lod: layers over LoD sequences (pooling, softmax, expand, pad, slice,
reshape, ...)."""

from ...ir import Variable, convert_dtype
from ..layer_helper import LayerHelper
from .utils import check_dtype
from .utils import append_defined, check_variable, single

__all__ = ["sequence_conv", "sequence_reverse", "sequence_pad", "sequence_unpad", "sequence_expand_as",
           "sequence_mask", "sequence_slice", "sequence_reshape", "sequence_scatter", "sequence_enumerate",
           "sequence_pool", "sequence_first_step", "sequence_last_step", "sequence_softmax", "sequence_concat",
           "sequence_expand"]


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


def _need_lod_briefly(x, arg, layer):
    check_variable(x, arg, layer)
    if x.lod_level < 1:
        raise ValueError("%s: '%s' (%s) has lod_level=0; declare its data with lod_level=1" % (layer, arg, x.name))


def sequence_reverse(x, name=None):
    """Each sequence's rows in reverse order (same LoD)."""
    _need_lod_briefly(x, "x", "sequence_reverse")
    return append_defined("sequence_reverse", {"X": x}, name=name)["Y"][0]


def sequence_pad(x, pad_value, maxlen=None, name=None):
    """LoD [T, ...] -> ([N, maxlen, ...] padded with pad_value, lengths [N] int64)."""
    _need_lod_briefly(x, "x", "sequence_pad")
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
    _need_lod_briefly(y, "y", "sequence_expand_as")
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


_NUM = ("float32", "float64", "int32", "int64")


def sequence_slice(input, offset, length, name=None):
    """Sequence i keeps length[i] rows from row offset[i] of it."""
    check_dtype(input, "input", "sequence_slice", _NUM)
    check_dtype(offset, "offset", "sequence_slice", ("int32", "int64"))
    check_dtype(length, "length", "sequence_slice", ("int32", "int64"))
    offset.stop_gradient = True
    length.stop_gradient = True
    return append_defined("sequence_slice", {"X": input, "Offset": offset, "Length": length}, name=name)["Out"][0]


def sequence_reshape(input, new_dim):
    """Each sequence's values re-cut into rows of width new_dim (the LoD scales accordingly)."""
    check_dtype(input, "input", "fluid.layers.sequence_reshape", _NUM)
    return append_defined("sequence_reshape", {"X": input}, {"new_dim": int(new_dim)})["Out"][0]


def sequence_scatter(input, index, updates, name=None):
    """input with updates added at columns index of row i, for each sequence i of index."""
    check_dtype(input, "input", "sequence_scatter", _NUM)
    check_dtype(index, "index", "sequence_scatter", ("int32", "int64"))
    check_dtype(updates, "updates", "sequence_scatter", _NUM)
    return append_defined("sequence_scatter", {"X": input, "Ids": index, "Updates": updates}, name=name)["Out"][0]


def sequence_enumerate(input, win_size, pad_value=0, name=None):
    """Row t: the win_size ids from t on within its sequence, pad_value past its end."""
    check_dtype(input, "input", "sequence_enumerate", ("int32", "int64"))
    return append_defined("sequence_enumerate", {"X": input}, {"win_size": int(win_size), "pad_value": int(pad_value)},
                          name=name, stop_gradient=True)["Out"][0]


_POOL_TYPES = ("average", "sum", "sqrt", "max", "last", "first")


def _need_lod(x, arg, layer):
    check_variable(x, arg, layer)
    if x.lod_level < 1:
        raise ValueError("%s: '%s' (%s) has lod_level=0, so it carries no sequences; declare the data it comes "
                         "from with lod_level=1 (e.g. fluid.layers.data(name, shape=[1], dtype='int64', "
                         "lod_level=1))" % (layer, arg, x.name))


def sequence_pool(input, pool_type, is_test=False, pad_value=0.0):
    """One row per sequence: average, sum, sqrt (sum / sqrt(len)), max, last or first. Empty sequences
    give pad_value."""
    _need_lod(input, "input", "sequence_pool")
    if not isinstance(pool_type, str) or pool_type.lower() not in _POOL_TYPES:
        raise ValueError("sequence_pool: pool_type must be one of %s, got %r" % (", ".join(_POOL_TYPES), pool_type))
    return single(append_defined("sequence_pool", {"X": input},
                                 {"pooltype": pool_type.upper(), "is_test": bool(is_test), "pad_value": float(pad_value)},
                                 stop_gradient={"MaxIndex"}))


def sequence_first_step(input):
    return sequence_pool(input=input, pool_type="first")


def sequence_last_step(input):
    return sequence_pool(input=input, pool_type="last")


def sequence_softmax(input, use_cudnn=False, name=None):
    """Softmax over the rows of each sequence; input is [T, 1] (or [T])."""
    _need_lod(input, "input", "sequence_softmax")
    return single(append_defined("sequence_softmax", {"X": input}, {"use_cudnn": bool(use_cudnn)}, name=name))


def sequence_concat(input, name=None):
    """Sequence i of the result is sequence i of every input, in order (all inputs have as many sequences)."""
    if not isinstance(input, (list, tuple)) or not input:
        raise TypeError("sequence_concat: input must be a non-empty list of Variables")
    for i, x in enumerate(input):
        _need_lod(x, "input[%d]" % i, "sequence_concat")
    return single(append_defined("sequence_concat", {"X": list(input)}, {}, name=name))


def sequence_expand(x, y, ref_level=-1, name=None):
    """Repeat each sequence of x (each row, if x has no LoD) as many times as y's matching sequence at
    ref_level (-1: y's last level) has elements."""
    check_variable(x, "x", "sequence_expand")
    _need_lod(y, "y", "sequence_expand")
    return single(append_defined("sequence_expand", {"X": x, "Y": y}, {"ref_level": int(ref_level)}, name=name))
