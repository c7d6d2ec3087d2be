"""Convolution, pooling, normalization, resizing and sampling layers of Paddle's fluid.layers.nn."""

import functools

import operator

from ....ir import Variable
from ...initializer import Constant, Normal
from ...layer_helper import LayerHelper
from ...param_attr import ParamAttr
from ..utils import append_defined, as_list, check_variable, out_var, single

__all__ = ["conv2d_transpose", "conv3d_transpose", "conv3d", "pool3d", "adaptive_pool2d", "adaptive_pool3d",
           "group_norm", "instance_norm", "lrn", "image_resize", "resize_bilinear", "resize_trilinear",
           "resize_nearest", "interpolate", "image_resize_short", "grid_sampler", "affine_grid", "inplace_abn",
           "layer_norm"]


def _padding(padding, n, layer):
    """Paddle's padding forms -> (attr list, padding_algorithm)."""
    if isinstance(padding, str):
        p = padding.upper()
        if p == "VALID":
            return [0] * n, "VALID"
        raise NotImplementedError("%s: padding=%r is not supported; give explicit paddings" % (layer, padding))
    if isinstance(padding, int):
        return [padding] * n, "EXPLICIT"
    padding = list(padding)
    if len(padding) == n:
        return padding, "EXPLICIT"
    if len(padding) == 2 * n:
        if all(padding[2 * i] == padding[2 * i + 1] for i in range(n)):
            return [padding[2 * i] for i in range(n)], "EXPLICIT"
        return padding, "EXPLICIT"
    raise ValueError("%s: padding must be an int or a list of %d or %d ints, got %r" % (layer, n, 2 * n, padding))


def _conv_nd(n, transpose, input, num_filters, filter_size, stride, padding, dilation, groups, param_attr,
             bias_attr, use_cudnn, act, name, data_format, output_size=None):
    layer = ("conv%dd" % n) + ("_transpose" if transpose else "")
    check_variable(input, "input", layer)
    last = data_format in ("NHWC", "NDHWC")
    c = input.shape[-1] if last else input.shape[1]
    if c < 0:
        raise ValueError("%s: the channel dim of %s is unknown (%s)" % (layer, input.name, list(input.shape)))
    groups = 1 if groups is None else groups
    st = as_list(stride, n, layer + " stride")
    dl = as_list(dilation, n, layer + " dilation")
    pd, algo = _padding(padding, n, layer)
    op_type = layer
    if transpose:
        if filter_size is None:
            if output_size is None:
                raise ValueError("%s: give filter_size or output_size" % layer)
            osz = as_list(output_size, n, layer + " output_size")
            sp = input.shape[1:1 + n] if last else input.shape[2:2 + n]
            pp = pd if len(pd) == 2 * n else [v for v in pd for _ in range(2)]
            filter_size = [(osz[i] - (sp[i] - 1) * st[i] + pp[2 * i] + pp[2 * i + 1] - 1) // dl[i] + 1
                           for i in range(n)]
        fs = as_list(filter_size, n, layer + " filter_size")
        filter_shape = [c, num_filters // groups] + fs
        if n == 2 and c == groups and num_filters == c and not use_cudnn:
            op_type = "depthwise_conv2d_transpose"
    else:
        fs = as_list(filter_size, n, layer + " filter_size")
        if c % groups != 0:
            raise ValueError("%s: channels (%d) must be divisible by groups (%d)" % (layer, c, groups))
        filter_shape = [num_filters, c // groups] + fs
    helper = LayerHelper(op_type, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    numel = 1
    for v in (fs + [c]):
        numel *= v
    w = helper.create_parameter(attr=helper.param_attr, shape=filter_shape, dtype=input.dtype,
                                default_initializer=None if transpose else Normal(0.0, (2.0 / numel) ** 0.5, 0))
    attrs = {"strides": st, "paddings": pd, "padding_algorithm": algo, "dilations": dl, "groups": groups,
             "use_cudnn": use_cudnn, "data_format": data_format}
    if transpose:
        attrs["output_size"] = [] if output_size is None else as_list(output_size, n, layer + " output_size")
    else:
        attrs["use_mkldnn"] = False
    pre = append_defined(op_type, {"Input": input, "Filter": w}, attrs, helper=helper)["Output"][0]
    pre = helper.append_bias_op(pre, dim_start=n + 1 if last else 1, dim_end=None if last else 2)
    return helper.append_activation(pre)


def conv2d_transpose(input, num_filters, output_size=None, filter_size=None, padding=0, stride=1, dilation=1,
                     groups=None, param_attr=None, bias_attr=None, use_cudnn=True, act=None, name=None,
                     data_format="NCHW"):
    if param_attr is False:
        raise ValueError("conv2d_transpose: param_attr must not be False")
    return _conv_nd(2, True, input, num_filters, filter_size, stride, padding, dilation, groups, param_attr,
                    bias_attr, use_cudnn, act, name, data_format, output_size)


def conv3d_transpose(input, num_filters, output_size=None, filter_size=None, padding=0, stride=1, dilation=1,
                     groups=None, param_attr=None, bias_attr=None, use_cudnn=True, act=None, name=None,
                     data_format="NCDHW"):
    return _conv_nd(3, True, input, num_filters, filter_size, stride, padding, dilation, groups, param_attr,
                    bias_attr, use_cudnn, act, name, data_format, output_size)


def conv3d(input, num_filters, filter_size, stride=1, padding=0, dilation=1, groups=None, param_attr=None,
           bias_attr=None, use_cudnn=True, act=None, name=None, data_format="NCDHW"):
    return _conv_nd(3, False, input, num_filters, filter_size, stride, padding, dilation, groups, param_attr,
                    bias_attr, use_cudnn, act, name, data_format)


def pool3d(input, pool_size=-1, pool_type="max", pool_stride=1, pool_padding=0, global_pooling=False,
           use_cudnn=True, ceil_mode=False, name=None, exclusive=True, data_format="NCDHW"):
    if pool_type not in ("max", "avg"):
        raise ValueError("pool3d: pool_type must be 'max' or 'avg', got %r" % (pool_type,))
    if not global_pooling and pool_size == -1:
        raise ValueError("pool3d: pool_size must be given unless global_pooling=True")
    if data_format not in ("NCDHW", "NDHWC"):
        raise ValueError("pool3d: data_format must be NCDHW or NDHWC, got %r" % (data_format,))
    pd, algo = _padding(pool_padding, 3, "pool3d")
    attrs = {"pooling_type": pool_type, "ksize": as_list(pool_size, 3, "pool3d pool_size"),
             "global_pooling": global_pooling, "strides": as_list(pool_stride, 3, "pool3d pool_stride"),
             "paddings": pd, "padding_algorithm": algo, "use_cudnn": use_cudnn, "ceil_mode": ceil_mode,
             "use_mkldnn": False, "exclusive": exclusive, "data_format": data_format}
    return single(append_defined("pool3d", {"X": input}, attrs, name=name))


def _adaptive_pool(n, input, pool_size, pool_type, require_index, name):
    layer = "adaptive_pool%dd" % n
    if pool_type not in ("max", "avg"):
        raise ValueError("%s: pool_type must be 'max' or 'avg', got %r" % (layer, pool_type))
    if pool_type == "avg" and require_index:
        raise ValueError("%s: require_index is only supported with pool_type='max'" % layer)
    ks = as_list(pool_size, n, layer + " pool_size")
    attrs = {"pooling_type": pool_type, "ksize": ks, "adaptive": True}
    if pool_type == "max":
        outs = append_defined("max_pool%dd_with_index" % n, {"X": input}, attrs, name=name)
        return (outs["Out"][0], outs["Mask"][0]) if require_index else outs["Out"][0]
    if n == 3:
        return single(append_defined("pool3d", {"X": input}, attrs, name=name))
    return single(append_defined("pool2d", {"X": input}, attrs, name=name))


def adaptive_pool2d(input, pool_size, pool_type="max", require_index=False, name=None):
    return _adaptive_pool(2, input, pool_size, pool_type, require_index, name)


def adaptive_pool3d(input, pool_size, pool_type="max", require_index=False, name=None):
    return _adaptive_pool(3, input, pool_size, pool_type, require_index, name)


def group_norm(input, groups, epsilon=1e-05, param_attr=None, bias_attr=None, act=None, data_layout="NCHW",
               name=None):
    if data_layout not in ("NCHW", "NHWC"):
        raise ValueError("group_norm: data_layout must be NCHW or NHWC, got %r" % (data_layout,))
    helper = LayerHelper("group_norm", param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    c = input.shape[1] if data_layout == "NCHW" else input.shape[-1]
    inputs = {"X": input}
    # Paddle 1.8 tests `if param_attr:` / `if bias_attr:`: with the default None there is no scale or bias.
    if param_attr:
        inputs["Scale"] = helper.create_parameter(attr=helper.param_attr, shape=[c], dtype=input.dtype,
                                                  default_initializer=Constant(1.0))
    if bias_attr:
        inputs["Bias"] = helper.create_parameter(attr=helper.bias_attr, shape=[c], dtype=input.dtype, is_bias=True)
    outs = append_defined("group_norm", inputs, {"epsilon": epsilon, "groups": groups, "data_layout": data_layout},
                          helper=helper)
    for slot in ("Mean", "Variance"):
        outs[slot][0].stop_gradient = True
    return helper.append_activation(outs["Y"][0])


def instance_norm(input, epsilon=1e-05, param_attr=None, bias_attr=None, name=None):
    if bias_attr is False:
        raise ValueError("instance_norm: bias_attr must not be False")
    helper = LayerHelper("instance_norm", param_attr=param_attr, bias_attr=bias_attr, name=name)
    c = input.shape[1]
    scale = helper.create_parameter(attr=helper.param_attr, shape=[c], dtype=input.dtype,
                                    default_initializer=Constant(1.0))
    bias = helper.create_parameter(attr=helper.bias_attr, shape=[c], dtype=input.dtype, is_bias=True,
                                   default_initializer=Constant(0.0))
    outs = append_defined("instance_norm", {"X": input, "Scale": scale, "Bias": bias}, {"epsilon": epsilon},
                          helper=helper)
    return outs["Y"][0]


def lrn(input, n=5, k=1.0, alpha=0.0001, beta=0.75, name=None, data_format="NCHW"):
    if len(input.shape) != 4:
        raise ValueError("lrn: input must be 4-D, got shape %s" % (list(input.shape),))
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("lrn: data_format must be NCHW or NHWC, got %r" % (data_format,))
    outs = append_defined("lrn", {"X": input}, {"n": n, "k": k, "alpha": alpha, "beta": beta,
                                                "data_format": data_format}, name=name)
    outs["MidOut"][0].stop_gradient = True
    return outs["Out"][0]


_RESAMPLE = {"BILINEAR": "bilinear", "TRILINEAR": "trilinear", "NEAREST": "nearest"}


def image_resize(input, out_shape=None, scale=None, name=None, resample="BILINEAR", actual_shape=None,
                 align_corners=True, align_mode=1, data_format="NCHW"):
    if resample not in _RESAMPLE:
        raise ValueError("image_resize: resample must be BILINEAR, TRILINEAR or NEAREST, got %r" % (resample,))
    method = _RESAMPLE[resample]
    nd = len(input.shape)
    if (method != "trilinear" and nd != 4) or (method == "trilinear" and nd != 5):
        raise ValueError("image_resize: %s needs a %d-D input, got shape %s"
                         % (resample, 5 if method == "trilinear" else 4, list(input.shape)))
    if not isinstance(align_corners, bool):
        raise TypeError("image_resize: align_corners must be a bool, got %r" % (align_corners,))
    if align_mode not in (0, 1):
        raise ValueError("image_resize: align_mode must be 0 or 1, got %r" % (align_mode,))
    if out_shape is None and scale is None:
        raise ValueError("image_resize: give out_shape or scale")
    ok = ("NCHW", "NHWC") if nd == 4 else ("NCDHW", "NDHWC")
    if data_format not in ok:
        raise ValueError("image_resize: data_format must be one of %s, got %r" % (ok, data_format))
    attrs = {"out_d": -1, "out_h": -1, "out_w": -1, "interp_method": method, "align_corners": align_corners,
             "align_mode": align_mode, "data_layout": "NCHW" if data_format in ("NCHW", "NCDHW") else "NHWC"}
    inputs = {"X": input}
    if out_shape is not None:
        if isinstance(out_shape, Variable):
            out_shape.stop_gradient = True
            inputs["OutSize"] = out_shape
        else:
            if any(isinstance(d, Variable) for d in out_shape):
                raise NotImplementedError("image_resize: out_shape entries given as Variables are not supported")
            if len(out_shape) != nd - 2:
                raise ValueError("image_resize: out_shape must have %d entries, got %r" % (nd - 2, out_shape))
            for k, v in zip(["out_d", "out_h", "out_w"][5 - nd:], out_shape):
                attrs[k] = int(v)
    else:
        if isinstance(scale, Variable):
            raise NotImplementedError("image_resize: scale given as a Variable is not supported")
        if scale <= 0:
            raise ValueError("image_resize: scale must be > 0, got %r" % (scale,))
        attrs["scale"] = float(scale)
    if isinstance(actual_shape, Variable):
        actual_shape.stop_gradient = True
        inputs["OutSize"] = actual_shape
    elif actual_shape is not None:
        raise TypeError("image_resize: actual_shape must be a Variable or None")
    return single(append_defined("%s_interp" % method, inputs, attrs, name=name))


def resize_bilinear(input, out_shape=None, scale=None, name=None, actual_shape=None, align_corners=True,
                    align_mode=1, data_format="NCHW"):
    return image_resize(input, out_shape, scale, name, "BILINEAR", actual_shape, align_corners, align_mode,
                        data_format)


def resize_trilinear(input, out_shape=None, scale=None, name=None, actual_shape=None, align_corners=True,
                     align_mode=1, data_format="NCDHW"):
    return image_resize(input, out_shape, scale, name, "TRILINEAR", actual_shape, align_corners, align_mode,
                        data_format)


def resize_nearest(input, out_shape=None, scale=None, name=None, actual_shape=None, align_corners=True,
                   data_format="NCHW"):
    return image_resize(input, out_shape, scale, name, "NEAREST", actual_shape, align_corners, 1, data_format)


def interpolate(input, out_shape=None, scale=None, name=None, resample="BILINEAR", actual_shape=None,
                align_corners=True, align_mode=1, data_format="NCHW"):
    return image_resize(input, out_shape, scale, name, resample, actual_shape, align_corners, align_mode,
                        data_format)


def image_resize_short(input, out_short_len, resample="BILINEAR"):
    if len(input.shape) != 4:
        raise ValueError("image_resize_short: input must be 4-D, got shape %s" % (list(input.shape),))
    hw = list(input.shape[2:4])
    short = hw.index(min(hw))
    out = list(hw)
    out[short] = out_short_len
    out[1 - short] = int(float(out[1 - short]) * (float(out_short_len) / float(hw[short])) + 0.5)
    return image_resize(input=input, out_shape=out, resample=resample)


def grid_sampler(x, grid, name=None):
    return append_defined("grid_sampler", {"X": x, "Grid": grid}, name=name)["Output"][0]


def affine_grid(theta, out_shape, name=None):
    if not isinstance(theta, Variable):
        raise ValueError("affine_grid: theta must be a Variable")
    if isinstance(out_shape, Variable):
        return append_defined("affine_grid", {"Theta": theta, "OutputShape": out_shape}, name=name)["Output"][0]
    if not isinstance(out_shape, (list, tuple)):
        raise ValueError("affine_grid: out_shape must be a list, tuple or Variable, got %r" % (out_shape,))
    return append_defined("affine_grid", {"Theta": theta}, {"output_shape": list(out_shape)},
                          name=name)["Output"][0]


def inplace_abn(input, act=None, is_test=False, momentum=0.9, epsilon=1e-05, param_attr=None, bias_attr=None,
                data_layout="NCHW", name=None, moving_mean_name=None, moving_variance_name=None,
                do_model_average_for_mean_and_var=True, use_global_stats=False, act_alpha=1.0):
    """Batch norm and activation (None, 'leaky_relu' or 'elu') written over `input`, as in Paddle 1.8."""
    if act not in (None, "identity", "leaky_relu", "elu"):
        raise ValueError("inplace_abn: act must be None, 'identity', 'leaky_relu' or 'elu', got %r" % (act,))
    if data_layout not in ("NCHW", "NHWC"):
        raise ValueError("inplace_abn: data_layout must be NCHW or NHWC, got %r" % (data_layout,))
    if isinstance(momentum, Variable):
        raise NotImplementedError("inplace_abn: momentum given as a Variable is not supported")
    helper = LayerHelper("inplace_abn", param_attr=param_attr, bias_attr=bias_attr, name=name)
    dtype = input.dtype
    c = input.shape[1] if data_layout == "NCHW" else input.shape[-1]
    scale = helper.create_parameter(attr=helper.param_attr, shape=[c], dtype=dtype,
                                    default_initializer=Constant(1.0))
    bias = helper.create_parameter(attr=helper.bias_attr, shape=[c], dtype=dtype, is_bias=True)
    stats = []
    for stat_name, init in ((moving_mean_name, 0.0), (moving_variance_name, 1.0)):
        v = helper.create_parameter(attr=ParamAttr(name=stat_name, initializer=Constant(init), trainable=False,
                                                   do_model_average=do_model_average_for_mean_and_var),
                                    shape=[c], dtype=dtype)
        v.stop_gradient = True
        stats.append(v)
    mean, variance = stats
    saved_mean = out_var(helper, dtype, stop_gradient=True)
    saved_var = out_var(helper, dtype, stop_gradient=True)
    helper.append_op(type="inplace_abn",
                     inputs={"X": [input], "Scale": [scale], "Bias": [bias], "Mean": [mean], "Variance": [variance]},
                     outputs={"Y": [input], "MeanOut": [mean], "VarianceOut": [variance], "SavedMean": [saved_mean],
                              "SavedVariance": [saved_var]},
                     attrs={"epsilon": epsilon, "is_test": is_test, "data_layout": data_layout, "use_mkldnn": False,
                            "fuse_with_relu": False, "use_global_stats": use_global_stats, "activation": act,
                            "alpha": act_alpha, "momentum": momentum})
    return input


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
    mean = out_var(helper, dtype, stop_gradient=True)
    var = out_var(helper, dtype, stop_gradient=True)
    out = out_var(helper, dtype, lod_level=input.lod_level)
    helper.append_op(type="layer_norm", inputs=inputs, outputs={"Y": [out], "Mean": [mean], "Variance": [var]},
                     attrs={"epsilon": float(epsilon), "begin_norm_axis": begin_norm_axis})
    return helper.append_activation(out)
