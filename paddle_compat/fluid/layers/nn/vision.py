"""Region-of-interest, deformable and data-normalization layers of Paddle's fluid.layers.nn, and the image ops beside
them (random_crop, similarity_focus, fsp_matrix, mean_iou)."""

import numpy as np

from ....ir import Variable
from ...initializer import Constant, Normal
from ...layer_helper import LayerHelper
from ...param_attr import ParamAttr
from ..utils import append_defined, as_list, check_variable, single

__all__ = ["fsp_matrix", "similarity_focus", "random_crop", "mean_iou", "data_norm", "spectral_norm", "roi_pool",
           "roi_align", "psroi_pool", "prroi_pool", "deformable_conv", "deformable_roi_pooling"]


def fsp_matrix(x, y):
    return single(append_defined("fsp", {"X": x, "Y": y}))


def similarity_focus(input, axis, indexes, name=None):
    """A 0/1 mask of input's shape: for each index along axis, the greedy row- and column-unique maxima of that
    slice, spread across the axis (see ops/defs/nn_ops.py)."""
    check_variable(input, "input", "similarity_focus")
    if len(input.shape) != 4:
        raise ValueError("similarity_focus: input must be 4-D, got shape %s" % (list(input.shape),))
    if axis not in (1, 2, 3):
        raise ValueError("similarity_focus: axis must be 1, 2 or 3, got %r" % (axis,))
    if not isinstance(indexes, (list, tuple)) or not indexes:
        raise ValueError("similarity_focus: indexes must be a non-empty list, got %r" % (indexes,))
    outs = append_defined("similarity_focus", {"X": input}, {"axis": axis, "indexes": [int(i) for i in indexes]},
                          name=name, stop_gradient=True)
    return outs["Out"][0]


def random_crop(x, shape, seed=None):
    """A random window of `shape` over x's trailing dimensions, drawn per instance."""
    check_variable(x, "x", "random_crop")
    if not isinstance(shape, (list, tuple)):
        raise TypeError("random_crop: shape must be a list of ints, got %r" % (shape,))
    attrs = {"shape": [int(s) for s in shape]}
    if seed is None:
        # numpy's global RNG, as Paddle 1.8 (a script's later numpy draws see the same state)
        seed = np.random.randint(-65536, 65536)
    if isinstance(seed, int):
        attrs["startup_seed"] = seed
        seed_in = None
    elif isinstance(seed, Variable):
        seed_in = seed
    else:
        raise ValueError("random_crop: seed must be a Variable or an int, got %r" % (seed,))
    outs = append_defined("random_crop", {"X": x, "Seed": seed_in}, attrs, stop_gradient=True)
    return outs["Out"][0]


def mean_iou(input, label, num_classes):
    outs = append_defined("mean_iou", {"Predictions": input, "Labels": label}, {"num_classes": num_classes})
    return outs["OutMeanIou"][0], outs["OutWrong"][0], outs["OutCorrect"][0]


def data_norm(input, act=None, epsilon=1e-05, param_attr=None, data_layout="NCHW", in_place=False, name=None,
              moving_mean_name=None, moving_variance_name=None, do_model_average_for_mean_and_var=True,
              slot_dim=-1, sync_stats=False, summary_decay_rate=0.9999999, enable_scale_and_shift=False):
    """Normalises [N, C] input by accumulated statistics: (x - BatchSum / BatchSize) * sqrt(BatchSize /
    BatchSquareSum). The three statistics are parameters (named name.batch_size, .batch_sum,
    .batch_square_sum) whose "gradients" are this batch's statistics (see ops/defs/norm_resize_ops.py)."""
    check_variable(input, "input", "data_norm")
    if sync_stats:
        raise NotImplementedError("data_norm: sync_stats=True (NCCL all-reduce of the statistics) is not "
                                  "supported; the statistics are per trainer")
    helper = LayerHelper("data_norm", act=act, name=name)
    dtype = input.dtype
    c = input.shape[1] if data_layout == "NCHW" else input.shape[-1]
    defaults = {"batch_size": 1e4, "batch_sum": 0.0, "batch_square_sum": 1e4, "scale_w": 1.0, "bias": 0.0}
    if param_attr is not None:
        if not isinstance(param_attr, dict):
            raise TypeError("data_norm: param_attr must be a dict of initial values (batch_size, batch_sum, "
                            "batch_square_sum, scale_w, bias), got %r" % (param_attr,))
        defaults.update({k: v for k, v in param_attr.items() if k in defaults})
    base = name or helper.name

    def param(key):
        return helper.create_parameter(
            attr=ParamAttr(name="%s.%s" % (base, key), initializer=Constant(float(defaults[key])), trainable=True),
            shape=[c], dtype=dtype)

    inputs = {"X": input}
    if enable_scale_and_shift:
        inputs["scale_w"] = param("scale_w")
        inputs["bias"] = param("bias")
    inputs["BatchSize"] = param("batch_size")
    inputs["BatchSum"] = param("batch_sum")
    inputs["BatchSquareSum"] = param("batch_square_sum")
    attrs = {"epsilon": float(epsilon), "sync_stats": bool(sync_stats), "summary_decay_rate": summary_decay_rate,
             "data_layout": data_layout}
    if slot_dim > 0:
        attrs["slot_dim"] = int(slot_dim)
    if enable_scale_and_shift:
        attrs["enable_scale_and_shift"] = True
    outs = append_defined("data_norm", inputs, attrs, helper=helper)
    for slot in ("Means", "Scales"):
        outs[slot][0].stop_gradient = True
    return helper.append_activation(outs["Y"][0])


def spectral_norm(weight, dim=0, power_iters=1, eps=1e-12, name=None):
    """weight / sigma, sigma its largest singular value (weight seen as [shape[dim], rest]) estimated by
    power_iters rounds of power iteration from the parameters U, V (Normal(0, 1) initial values)."""
    check_variable(weight, "weight", "spectral_norm")
    if not isinstance(dim, int) or not isinstance(power_iters, int) or not isinstance(eps, float):
        raise TypeError("spectral_norm: dim and power_iters must be int, eps float")
    helper = LayerHelper("spectral_norm", name=name)
    shape = list(weight.shape)
    if not -len(shape) <= dim < len(shape) or any(s < 0 for s in shape):
        raise ValueError("spectral_norm: weight %s of shape %s needs a known shape and 0 <= dim < rank, dim=%d"
                         % (weight.name, shape, dim))
    h = shape[dim]
    w = 1
    for s in shape:
        w *= s
    w //= h
    u = helper.create_parameter(attr=ParamAttr(), shape=[h], dtype=weight.dtype, default_initializer=Normal(0., 1.))
    u.stop_gradient = True
    v = helper.create_parameter(attr=ParamAttr(), shape=[w], dtype=weight.dtype, default_initializer=Normal(0., 1.))
    v.stop_gradient = True
    outs = append_defined("spectral_norm", {"Weight": weight, "U": u, "V": v},
                          {"dim": dim, "power_iters": power_iters, "eps": eps}, helper=helper)
    return outs["Out"][0]


def _rois(input, rois, layer):
    check_variable(input, "input", layer)
    check_variable(rois, "rois", layer)


def roi_pool(input, rois, pooled_height=1, pooled_width=1, spatial_scale=1.0, rois_lod=None):
    """Max pooling over each RoI's pooled_height x pooled_width bins (RoI corners rounded to integers).
    rois_lod: the RoIs' offsets per image as a tensor, in place of rois' LoD."""
    _rois(input, rois, "roi_pool")
    outs = append_defined("roi_pool", {"X": input, "ROIs": rois, "RoisLod": rois_lod},
                          {"pooled_height": pooled_height, "pooled_width": pooled_width,
                           "spatial_scale": spatial_scale})
    outs["Argmax"][0].stop_gradient = True
    return outs["Out"][0]


def roi_align(input, rois, pooled_height=1, pooled_width=1, spatial_scale=1.0, sampling_ratio=-1, name=None,
              rois_lod=None):
    """Average of bilinear samples (sampling_ratio per bin side, or ceil(bin size) when <= 0) per RoI bin."""
    _rois(input, rois, "roi_align")
    outs = append_defined("roi_align", {"X": input, "ROIs": rois, "RoisLod": rois_lod},
                          {"pooled_height": pooled_height, "pooled_width": pooled_width,
                           "spatial_scale": spatial_scale, "sampling_ratio": sampling_ratio}, name=name)
    return outs["Out"][0]


def psroi_pool(input, rois, output_channels, spatial_scale, pooled_height, pooled_width, name=None):
    """Position-sensitive RoI average pooling: bin (i, j) of output channel c reads input channel
    (c * pooled_height + i) * pooled_width + j."""
    _rois(input, rois, "psroi_pool")
    for arg, v, t in (("output_channels", output_channels, int), ("spatial_scale", spatial_scale, float),
                      ("pooled_height", pooled_height, int), ("pooled_width", pooled_width, int)):
        if not isinstance(v, t):
            raise TypeError("psroi_pool: %s must be %s, got %r" % (arg, t.__name__, v))
    outs = append_defined("psroi_pool", {"X": input, "ROIs": rois},
                          {"output_channels": output_channels, "spatial_scale": spatial_scale,
                           "pooled_height": pooled_height, "pooled_width": pooled_width}, name=name)
    return outs["Out"][0]


def prroi_pool(input, rois, spatial_scale=1.0, pooled_height=1, pooled_width=1, batch_roi_nums=None, name=None):
    """Precise RoI pooling: the exact integral of the bilinearly interpolated map over each bin, divided by the
    bin's area; differentiable in the RoI coordinates too."""
    _rois(input, rois, "prroi_pool")
    if not isinstance(spatial_scale, float):
        raise TypeError("prroi_pool: spatial_scale must be float, got %r" % (spatial_scale,))
    if not isinstance(pooled_height, int) or not isinstance(pooled_width, int):
        raise TypeError("prroi_pool: pooled_height and pooled_width must be int")
    outs = append_defined("prroi_pool", {"X": input, "ROIs": rois, "BatchRoINums": batch_roi_nums},
                          {"spatial_scale": spatial_scale, "pooled_height": pooled_height,
                           "pooled_width": pooled_width}, name=name)
    return outs["Out"][0]


def deformable_conv(input, offset, mask, num_filters, filter_size, stride=1, padding=0, dilation=1, groups=None,
                    deformable_groups=None, im2col_step=None, param_attr=None, bias_attr=None, modulated=True,
                    name=None):
    """Deformable convolution: v2 (modulated=True, samples weighted by `mask`) or v1 (modulated=False)."""
    check_variable(input, "input", "deformable_conv")
    check_variable(offset, "offset", "deformable_conv")
    if modulated:
        check_variable(mask, "mask", "deformable_conv")
    if param_attr is False:
        raise ValueError("deformable_conv: param_attr should not be False")
    helper = LayerHelper("deformable_conv", param_attr=param_attr, bias_attr=bias_attr, name=name)
    c = input.shape[1]
    groups = groups or 1
    if c % groups:
        raise ValueError("deformable_conv: the %d input channels are not divisible by groups=%d" % (c, groups))
    fs = as_list(filter_size, 2, "filter_size")
    std = (2.0 / (fs[0] * fs[1] * c)) ** 0.5
    filt = helper.create_parameter(attr=helper.param_attr, shape=[num_filters, c // groups] + fs, dtype=input.dtype,
                                   default_initializer=Normal(0.0, std, 0))
    attrs = {"strides": as_list(stride, 2, "stride"), "paddings": as_list(padding, 2, "padding"),
             "dilations": as_list(dilation, 2, "dilation"), "groups": groups,
             "deformable_groups": deformable_groups or 1, "im2col_step": im2col_step or 64}
    if modulated:
        outs = append_defined("deformable_conv", {"Input": input, "Offset": offset, "Mask": mask, "Filter": filt},
                              attrs, helper=helper)
    else:
        outs = append_defined("deformable_conv_v1", {"Input": input, "Offset": offset, "Filter": filt}, attrs,
                              helper=helper)
    return helper.append_bias_op(outs["Output"][0], dim_start=1, dim_end=2)


def deformable_roi_pooling(input, rois, trans, no_trans=False, spatial_scale=1.0, group_size=[1, 1],  # noqa: B006
                           pooled_height=1, pooled_width=1, part_size=None, sample_per_part=1, trans_std=0.1,
                           position_sensitive=False, name=None):
    """Deformable RoI pooling (position-sensitive with position_sensitive=True: output channels = input
    channels / pooled_height / pooled_width; Paddle 1.8.5 passes that count as a float its op rejects)."""
    _rois(input, rois, "deformable_roi_pooling")
    check_variable(trans, "trans", "deformable_roi_pooling")
    if not isinstance(group_size, (list, tuple)) or (part_size is not None and not isinstance(part_size,
                                                                                              (list, tuple))):
        raise TypeError("deformable_roi_pooling: group_size and part_size must be lists")
    c = input.shape[1]
    if position_sensitive:
        if c % (pooled_height * pooled_width):
            raise ValueError("deformable_roi_pooling: %d input channels are not divisible by pooled_height * "
                             "pooled_width = %d" % (c, pooled_height * pooled_width))
        out_c = c // pooled_height // pooled_width
    else:
        out_c = c
    part = as_list(part_size if part_size is not None else [pooled_height, pooled_width], 2, "part_size")
    outs = append_defined("deformable_psroi_pooling", {"Input": input, "ROIs": rois, "Trans": trans},
                          {"no_trans": bool(no_trans), "spatial_scale": float(spatial_scale), "output_dim": out_c,
                           "group_size": as_list(group_size, 2, "group_size"), "pooled_height": pooled_height,
                           "pooled_width": pooled_width, "part_size": part, "sample_per_part": sample_per_part,
                           "trans_std": float(trans_std)}, name=name)
    outs["TopCount"][0].stop_gradient = True
    return outs["Output"][0]
