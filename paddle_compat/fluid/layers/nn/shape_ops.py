"""Shape, slicing, scattering, cropping and padding layers of Paddle's fluid.layers.nn."""

from ....ir import Variable
from ...layer_helper import LayerHelper
from ..tensor import fill_constant, zeros
from ..utils import append_defined, check_variable, out_var, single

__all__ = ["gather_nd", "scatter", "scatter_nd_add", "scatter_nd", "strided_slice", "unstack", "expand_as", "crop",
           "crop_tensor", "pad2d", "pad_constant_like", "space_to_depth", "pixel_shuffle", "shuffle_channel",
           "temporal_shift", "unfold", "affine_channel", "maxout", "shape", "slice", "pad"]


def gather_nd(input, index, name=None):
    return single(append_defined("gather_nd", {"X": input, "Index": index}, name=name))


def scatter(input, index, updates, name=None, overwrite=True):
    return single(append_defined("scatter", {"X": input, "Ids": index, "Updates": updates},
                                 {"overwrite": overwrite}, name=name))


def scatter_nd_add(ref, index, updates, name=None):
    if ref.dtype != updates.dtype:
        raise ValueError("scatter_nd_add: ref (%s) and updates (%s) must have the same dtype"
                         % (ref.dtype, updates.dtype))
    return single(append_defined("scatter_nd_add", {"X": ref, "Index": index, "Updates": updates}, name=name))


def scatter_nd(index, updates, shape, name=None):
    return scatter_nd_add(zeros(shape, updates.dtype), index, updates, name)


def strided_slice(input, axes, starts, ends, strides):
    for what, v in (("starts", starts), ("ends", ends), ("strides", strides)):
        if isinstance(v, Variable) or any(isinstance(e, Variable) for e in v):
            raise NotImplementedError("strided_slice: %s given as Variables is not supported; pass ints" % what)
        if len(v) != len(axes):
            raise ValueError("strided_slice: %s has %d entries but axes has %d" % (what, len(v), len(axes)))
    attrs = {"axes": list(axes), "starts": list(starts), "ends": list(ends), "strides": list(strides),
             "infer_flags": [1] * len(axes)}
    return single(append_defined("strided_slice", {"Input": input}, attrs))


def unstack(x, axis=0, num=None):
    if num is None:
        if axis is None or x.shape[axis] <= 0:
            raise ValueError("unstack: unknown size of axis %s of %s; pass num" % (axis, x.name))
        num = x.shape[axis]
    return append_defined("unstack", {"X": x}, {"axis": axis, "num": num})["Y"]


def expand_as(x, target_tensor, name=None):
    return single(append_defined("expand_as", {"X": x, "target_tensor": target_tensor}, name=name))


def crop(x, shape=None, offsets=None, name=None):
    check_variable(x, "x", "crop")
    offsets = [0] * len(x.shape) if offsets is None else offsets
    if isinstance(offsets, Variable):
        raise NotImplementedError("crop: offsets given as a Variable is not supported; pass a list of ints")
    ins, attrs = {"X": x}, {"offsets": list(offsets)}
    if isinstance(shape, Variable):
        ins["Y"] = shape
    else:
        attrs["shape"] = list(shape)
    return single(append_defined("crop", ins, attrs, name=name))


def _crop_arg(x, what, value, check, var_slot, list_slot, unknown, inputs, attrs):
    """One of crop_tensor's shape/offsets: ints (an attr), one int Variable (var_slot), or a list mixing ints
    and [1]-shaped Variables (list_slot, one [1] tensor per dimension, ints as fill_constant), as Paddle."""
    if isinstance(value, Variable):
        value.stop_gradient = True
        inputs[var_slot] = value
        attrs[what] = [unknown] * len(x.shape) if what == "offsets" else [-1] * len(x.shape)
        return
    if len(value) != len(x.shape):
        raise ValueError("crop_tensor: %s has %d entries but x (%s) is %d-D" % (what, len(value), x.name,
                                                                                len(x.shape)))
    if not any(isinstance(e, Variable) for e in value):
        for e in value:
            check(e)
        attrs[what] = list(value)
        return
    tensors, attr_vals = [], []
    for e in value:
        if isinstance(e, Variable):
            e.stop_gradient = True
            tensors.append(e)
            attr_vals.append(unknown)
        else:
            check(e)
            tensors.append(fill_constant([1], "int32", e, force_cpu=True))
            attr_vals.append(e)
    inputs[list_slot] = tensors
    attrs[what] = attr_vals


def crop_tensor(x, shape=None, offsets=None, name=None):
    """x[offsets : offsets + shape] per dimension (shape -1: to the end). shape and offsets may be ints, an int
    Variable, or lists mixing ints and [1]-shaped int Variables (read at run time)."""
    check_variable(x, "x", "crop_tensor")
    if shape is None:
        raise ValueError("crop_tensor: shape is required")
    offsets = [0] * len(x.shape) if offsets is None else offsets

    def check_shape(s):
        if not isinstance(s, int) or s == 0 or s < -1:
            raise ValueError("crop_tensor: shape entries must be positive ints or -1, got %r" % (s,))

    def check_offset(o):
        if not isinstance(o, int) or o < 0:
            raise ValueError("crop_tensor: offsets must be ints >= 0, got %r" % (o,))
    inputs, attrs = {"X": x}, {}
    _crop_arg(x, "offsets", offsets, check_offset, "Offsets", "OffsetsTensor", -1, inputs, attrs)
    _crop_arg(x, "shape", shape, check_shape, "Shape", "ShapeTensor", 0, inputs, attrs)
    return single(append_defined("crop_tensor", inputs, attrs, name=name))


def pad2d(input, paddings=[0, 0, 0, 0], mode="constant", pad_value=0.0, data_format="NCHW", name=None):
    if mode not in ("reflect", "edge", "constant"):
        raise ValueError("pad2d: mode must be constant, reflect or edge, got %r" % (mode,))
    if isinstance(paddings, Variable):
        raise NotImplementedError("pad2d: paddings given as a Variable is not supported; pass 4 ints")
    return single(append_defined("pad2d", {"X": input}, {"paddings": list(paddings), "mode": mode,
                                                         "pad_value": pad_value, "data_format": data_format},
                                 name=name))


def pad_constant_like(x, y, pad_value=0.0, name=None):
    return single(append_defined("pad_constant_like", {"X": x, "Y": y}, {"pad_value": float(pad_value)},
                                 name=name))


def space_to_depth(x, blocksize, name=None):
    if not isinstance(blocksize, int):
        raise TypeError("space_to_depth: blocksize must be an int, got %r" % (blocksize,))
    return single(append_defined("space_to_depth", {"X": x}, {"blocksize": blocksize}, name=name))


def pixel_shuffle(x, upscale_factor):
    if not isinstance(upscale_factor, int):
        raise TypeError("pixel_shuffle: upscale_factor must be an int, got %r" % (upscale_factor,))
    return single(append_defined("pixel_shuffle", {"X": x}, {"upscale_factor": upscale_factor}))


def shuffle_channel(x, group, name=None):
    if not isinstance(group, int):
        raise TypeError("shuffle_channel: group must be an int, got %r" % (group,))
    return single(append_defined("shuffle_channel", {"X": x}, {"group": group}, name=name))


def temporal_shift(x, seg_num, shift_ratio=0.25, name=None):
    if not isinstance(seg_num, int):
        raise TypeError("temporal_shift: seg_num must be an int, got %r" % (seg_num,))
    return single(append_defined("temporal_shift", {"X": x}, {"seg_num": seg_num, "shift_ratio": shift_ratio},
                                 name=name))


def _pair(v, what):
    if isinstance(v, int):
        return [v, v]
    if not isinstance(v, list) or len(v) != 2:
        raise ValueError("unfold: %s must be an int or a list of 2 ints, got %r" % (what, v))
    return list(v)


def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    if len(x.shape) != 4:
        raise ValueError("unfold: x must be 4-D (N, C, H, W), got shape %s" % (list(x.shape),))
    if isinstance(paddings, int):
        paddings = [paddings] * 4
    elif isinstance(paddings, list) and len(paddings) in (2, 4):
        paddings = paddings * 2 if len(paddings) == 2 else list(paddings)
    else:
        raise ValueError("unfold: paddings must be an int or a list of 2 or 4 ints, got %r" % (paddings,))
    attrs = {"kernel_sizes": _pair(kernel_sizes, "kernel_sizes"), "strides": _pair(strides, "strides"),
             "paddings": paddings, "dilations": _pair(dilations, "dilations")}
    return append_defined("unfold", {"X": x}, attrs, name=name)["Y"][0]


def affine_channel(x, scale=None, bias=None, data_layout="NCHW", name=None, act=None):
    helper = LayerHelper("affine_channel", name=name, act=act)
    out = single(append_defined("affine_channel", {"X": x, "Scale": scale, "Bias": bias},
                                {"data_layout": data_layout}, helper=helper))
    return helper.append_activation(out)


def maxout(x, groups, name=None, axis=1):
    if axis not in (1, -1, 3):
        raise ValueError("maxout: axis must be 1, -1 or 3, got %r" % (axis,))
    return single(append_defined("maxout", {"X": x}, {"groups": groups, "axis": 3 if axis == -1 else axis},
                                 name=name))


def shape(input):
    helper = LayerHelper("shape")
    out = out_var(helper, "int32", stop_gradient=True)
    helper.append_op(type="shape", inputs={"Input": [input]}, outputs={"Out": [out]})
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
