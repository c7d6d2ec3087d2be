"""The layers most models are built from: fc, embedding, conv2d, pool2d, batch_norm, dropout, softmax, matmul,
reshape, ... (Paddle's fluid.layers.nn)."""

import functools

import operator

from ....ir import VarType, Variable, convert_dtype, dtype_name, unique_name
from ...initializer import Constant, Normal
from ...layer_helper import LayerHelper
from ...param_attr import ParamAttr
from ..utils import append_defined, as_list, check_variable, out_var, single

__all__ = ["fc", "embedding", "conv2d", "pool2d", "batch_norm", "dropout", "softmax", "mul", "matmul", "reshape",
           "transpose", "split", "topk", "one_hot", "flatten", "squeeze", "unsqueeze", "stack", "gather", "expand",
           "l2_normalize", "autoincreased_step_counter", "merge_selected_rows", "get_tensor_from_selected_rows"]


def _prod(xs):
    return functools.reduce(operator.mul, xs, 1)


def fc(input, size, num_flatten_dims=1, param_attr=None, bias_attr=None, act=None, is_test=False, name=None):
    helper = LayerHelper("fc", input=input, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    dtype = helper.input_dtype()
    mul_results = []
    first = None
    for input_var, p_attr in helper.iter_inputs_and_params():
        shape = input_var.shape
        nfd = len(shape) - 1 if num_flatten_dims == -1 else num_flatten_dims
        if not 1 <= nfd < max(len(shape), 2):
            raise ValueError("fc: num_flatten_dims=%d is invalid for input %s of shape %s"
                             % (num_flatten_dims, input_var.name, list(shape)))
        in_features = _prod(shape[nfd:])
        if in_features <= 0:
            raise ValueError("fc: input %s has unknown feature dims %s" % (input_var.name, list(shape[nfd:])))
        w = helper.create_parameter(attr=p_attr, shape=[in_features, size], dtype=dtype, is_bias=False)
        tmp = out_var(helper, dtype, lod_level=input_var.lod_level)
        helper.append_op(type="mul", inputs={"X": [input_var], "Y": [w]}, outputs={"Out": [tmp]},
                         attrs={"x_num_col_dims": nfd, "y_num_col_dims": 1})
        mul_results.append(tmp)
        first = first or (input_var, nfd)
    if len(mul_results) == 1:
        pre_bias = mul_results[0]
    else:
        pre_bias = out_var(helper, dtype, lod_level=mul_results[0].lod_level)
        helper.append_op(type="sum", inputs={"X": mul_results}, outputs={"Out": [pre_bias]},
                         attrs={"use_mkldnn": False})
    pre_act = helper.append_bias_op(pre_bias, dim_start=first[1])
    return helper.append_activation(pre_act)


def embedding(input, size, is_sparse=False, is_distributed=False, padding_idx=None, param_attr=None,
              dtype="float32"):
    """fluid.layers.embedding: a `lookup_table` op, whose ids end in a dim of 1 ([N, 1] -> [N, D])."""
    return _embedding("lookup_table", input, size, is_sparse, is_distributed, padding_idx, param_attr, dtype)


def _embedding(op_type, input, size, is_sparse, is_distributed, padding_idx, param_attr, dtype):
    """lookup_table drops the ids' trailing 1; lookup_table_v2 (fluid.embedding) keeps the ids' shape."""
    check_variable(input, "input", "embedding")
    # Paddle 1.8.5's check_variable_and_dtype / check_dtype for both embeddings
    api = "fluid.layers.embedding" if op_type == "lookup_table" else "fluid.embedding"
    if dtype_name(input.dtype) != "int64":
        raise TypeError("The data type of 'input' in %s must be ['int64'], but received %s."
                        % (api, dtype_name(input.dtype)))
    if dtype_name(convert_dtype(dtype)) not in ("float16", "float32", "float64"):
        raise TypeError("The data type of 'dtype' in %s must be ['float16', 'float32', 'float64'], but "
                        "received %s." % (api, dtype_name(convert_dtype(dtype))))
    if len(size) != 2:
        raise ValueError("embedding: size must be [vocab_size, emb_dim], got %s" % (size,))
    helper = LayerHelper("embedding", param_attr=param_attr)
    remote_prefetch = bool(is_sparse and not is_distributed)
    w = helper.create_parameter(attr=helper.param_attr, shape=size, dtype=dtype, is_bias=False)
    if is_distributed:
        w.is_distributed = True
    padding_idx = -1 if padding_idx is None else padding_idx if padding_idx >= 0 else size[0] + padding_idx
    return single(append_defined(op_type, {"Ids": input, "W": w},
                                 {"is_sparse": bool(is_sparse), "is_distributed": bool(is_distributed),
                                  "remote_prefetch": remote_prefetch, "padding_idx": int(padding_idx)},
                                 helper=helper))


def conv2d(input, num_filters, filter_size, stride=1, padding=0, dilation=1, groups=None, param_attr=None,
           bias_attr=None, use_cudnn=True, act=None, name=None, data_format="NCHW"):
    check_variable(input, "input", "conv2d")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("conv2d: data_format must be 'NCHW' or 'NHWC', got %r" % (data_format,))
    helper = LayerHelper("conv2d", param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    channel_last = data_format == "NHWC"
    num_channels = input.shape[3] if channel_last else input.shape[1]
    if num_channels < 0:
        raise ValueError("conv2d: the channel dim of %s is unknown (%s)" % (input.name, list(input.shape)))
    groups = 1 if groups is None else groups
    if num_channels % groups != 0:
        raise ValueError("conv2d: channels (%d) must be divisible by groups (%d)" % (num_channels, groups))
    fs = as_list(filter_size, 2, "conv2d filter_size")
    st = as_list(stride, 2, "conv2d stride")
    pd = as_list(padding, 2, "conv2d padding")
    dl = as_list(dilation, 2, "conv2d dilation")
    op_type = "conv2d"
    if num_channels == groups and num_filters % num_channels == 0 and not use_cudnn:
        op_type = "depthwise_conv2d"
    filter_shape = [num_filters, num_channels // groups] + fs
    std = (2.0 / (fs[0] * fs[1] * num_channels)) ** 0.5
    w = helper.create_parameter(attr=helper.param_attr, shape=filter_shape, dtype=input.dtype,
                                default_initializer=Normal(0.0, std, 0))
    pre_bias = single(append_defined(op_type, {"Input": input, "Filter": w},
                                     {"strides": st, "paddings": pd, "dilations": dl, "groups": groups,
                                      "use_cudnn": use_cudnn, "use_mkldnn": False, "data_format": data_format},
                                     helper=helper), "Output")
    pre_act = helper.append_bias_op(pre_bias, dim_start=3 if channel_last else 1, dim_end=None if channel_last else 2)
    return helper.append_activation(pre_act)


def pool2d(input, pool_size=-1, pool_type="max", pool_stride=1, pool_padding=0, global_pooling=False,
           use_cudnn=True, ceil_mode=False, name=None, exclusive=True, data_format="NCHW"):
    check_variable(input, "input", "pool2d")
    if pool_type not in ("max", "avg"):
        raise ValueError("pool2d: pool_type must be 'max' or 'avg', got %r" % (pool_type,))
    if not global_pooling and pool_size == -1:
        raise ValueError("pool2d: pool_size must be given unless global_pooling=True")
    helper = LayerHelper("pool2d", name=name)
    ks = as_list(pool_size if pool_size != -1 else 1, 2, "pool2d pool_size")
    st = as_list(pool_stride, 2, "pool2d pool_stride")
    pd = as_list(pool_padding, 2, "pool2d pool_padding")
    return single(append_defined("pool2d", {"X": input},
                                 {"pooling_type": pool_type, "ksize": ks, "global_pooling": global_pooling,
                                  "strides": st, "paddings": pd, "use_cudnn": use_cudnn, "ceil_mode": ceil_mode,
                                  "use_mkldnn": False, "exclusive": exclusive, "data_format": data_format},
                                 helper=helper))


def batch_norm(input, act=None, is_test=False, momentum=0.9, epsilon=1e-05, param_attr=None, bias_attr=None,
               data_layout="NCHW", in_place=False, name=None, moving_mean_name=None, moving_variance_name=None,
               do_model_average_for_mean_and_var=False, use_global_stats=False):
    check_variable(input, "input", "batch_norm")
    helper = LayerHelper("batch_norm", param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    dtype = input.dtype
    c = input.shape[1] if data_layout == "NCHW" else input.shape[-1]
    scale = helper.create_parameter(attr=helper.param_attr, shape=[c], dtype=dtype,
                                    default_initializer=Constant(1.0))
    bias = helper.create_parameter(attr=helper.bias_attr, shape=[c], dtype=dtype, is_bias=True)
    mean = helper.create_parameter(attr=ParamAttr(name=moving_mean_name, initializer=Constant(0.0),
                                                  trainable=False), shape=[c], dtype=dtype)
    mean.stop_gradient = True
    variance = helper.create_parameter(attr=ParamAttr(name=moving_variance_name, initializer=Constant(1.0),
                                                      trainable=False), shape=[c], dtype=dtype)
    variance.stop_gradient = True
    # the moving stats are their own outputs and the saved stats stop gradient: the variables are made here
    saved_mean = out_var(helper, dtype, stop_gradient=True)
    saved_var = out_var(helper, dtype, stop_gradient=True)
    y = input if in_place else out_var(helper, dtype, lod_level=input.lod_level)
    helper.append_op(type="batch_norm",
                     inputs={"X": [input], "Scale": [scale], "Bias": [bias], "Mean": [mean], "Variance": [variance]},
                     outputs={"Y": [y], "MeanOut": [mean], "VarianceOut": [variance], "SavedMean": [saved_mean],
                              "SavedVariance": [saved_var]},
                     attrs={"momentum": float(momentum), "epsilon": float(epsilon), "is_test": is_test,
                            "data_layout": data_layout, "use_mkldnn": False, "fuse_with_relu": False,
                            "use_global_stats": use_global_stats})
    return helper.append_activation(y)


def dropout(x, dropout_prob, is_test=False, seed=None, name=None, dropout_implementation="downgrade_in_infer"):
    check_variable(x, "x", "dropout")
    if not 0.0 <= dropout_prob <= 1.0:
        raise ValueError("dropout: dropout_prob must be in [0, 1], got %s" % dropout_prob)
    if dropout_implementation not in ("downgrade_in_infer", "upscale_in_train"):
        raise ValueError("dropout: dropout_implementation must be 'downgrade_in_infer' or 'upscale_in_train'")
    return single(append_defined("dropout", {"X": x},
                                 {"dropout_prob": float(dropout_prob), "is_test": is_test,
                                  "fix_seed": seed is not None, "seed": seed if seed is not None else 0,
                                  "dropout_implementation": dropout_implementation},
                                 name=name, stop_gradient={"Mask"}))


def softmax(input, use_cudnn=False, name=None, axis=-1):
    check_variable(input, "input", "softmax")
    return single(append_defined("softmax", {"X": input}, {"axis": axis, "use_cudnn": use_cudnn}, name=name))


def mul(x, y, x_num_col_dims=1, y_num_col_dims=1, name=None):
    return single(append_defined("mul", {"X": x, "Y": y},
                                 {"x_num_col_dims": x_num_col_dims, "y_num_col_dims": y_num_col_dims}, name=name))


def matmul(x, y, transpose_x=False, transpose_y=False, alpha=1.0, name=None):
    check_variable(x, "x", "matmul")
    check_variable(y, "y", "matmul")
    return single(append_defined("matmul", {"X": x, "Y": y}, {"transpose_X": transpose_x, "transpose_Y": transpose_y,
                                                              "alpha": float(alpha)}, name=name))


def _xshape(helper, x):
    return out_var(helper, x.dtype, [0] + list(x.shape), stop_gradient=True)


def reshape(x, shape, actual_shape=None, act=None, inplace=False, name=None):
    check_variable(x, "x", "reshape")
    if not isinstance(shape, (list, tuple)):
        raise TypeError("reshape: shape must be a list or tuple, got %r" % (shape,))
    if sum(1 for d in shape if d == -1) > 1:
        raise ValueError("reshape: only one dim of %s may be -1" % (list(shape),))
    helper = LayerHelper("reshape2", act=act, name=name)
    out_shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    if -1 in out_shape and all(d >= 0 for d in x.shape):
        known = _prod([d for d in out_shape if d != -1])
        out_shape[out_shape.index(-1)] = _prod(x.shape) // known if known else -1
    xshape = _xshape(helper, x)   # from x's shape before an in-place reshape changes it
    if inplace:
        # Paddle's build-time shape inference writes Out's shape, and Out is x: later layers see the new shape
        out = x
        out.shape = tuple(int(d) for d in out_shape)
    else:
        out = out_var(helper, x.dtype, out_shape, x.lod_level)
    inputs = {"X": [x]}
    if actual_shape is not None:
        inputs["Shape"] = [actual_shape]
    helper.append_op(type="reshape2", inputs=inputs, outputs={"Out": [out], "XShape": [xshape]},
                     attrs={"shape": [int(d) for d in shape]})
    return helper.append_activation(out)


def transpose(x, perm, name=None):
    check_variable(x, "x", "transpose")
    if sorted(perm) != list(range(len(x.shape))):
        raise ValueError("transpose: perm %s is not a permutation of the %d dims of %s"
                         % (list(perm), len(x.shape), x.name))
    helper = LayerHelper("transpose", name=name)
    out = out_var(helper, x.dtype)
    helper.append_op(type="transpose2", inputs={"X": [x]}, outputs={"Out": [out], "XShape": [_xshape(helper, x)]},
                     attrs={"axis": list(perm)})
    return out


def split(input, num_or_sections, dim=-1, name=None):
    check_variable(input, "input", "split")
    helper = LayerHelper("split", name=name)
    nd = len(input.shape)
    axis = dim + nd if dim < 0 else dim
    size = input.shape[axis]
    if isinstance(num_or_sections, int):
        if size > 0 and size % num_or_sections != 0:
            raise ValueError("split: dim %d of size %d is not divisible into %d parts" % (dim, size, num_or_sections))
        num, sections = num_or_sections, []
    else:
        num, sections = 0, list(num_or_sections)
    return append_defined("split", {"X": input}, {"num": num, "sections": sections, "axis": axis},
                          helper=helper)["Out"]


def topk(input, k, name=None):
    helper = LayerHelper("top_k", name=name)
    # both outputs keep the input's LoD (Paddle's ShareLoD): beam search reads it from the scores
    values = out_var(helper, input.dtype, lod_level=input.lod_level)
    indices = out_var(helper, "int64", lod_level=input.lod_level, stop_gradient=True)
    helper.append_op(type="top_k", inputs={"X": [input]}, outputs={"Out": [values], "Indices": [indices]},
                     attrs={"k": int(k)})
    values.stop_gradient = True
    return values, indices


def one_hot(input, depth, allow_out_of_range=False):
    """ids [.., 1] -> [.., depth] float32 one-hot rows, depth an int or a Variable (op defined in
    ops/defs/nn_ops.py)."""
    ins, attrs = {"X": input}, {"allow_out_of_range": bool(allow_out_of_range)}
    if isinstance(depth, Variable):
        depth.stop_gradient = True
        ins["depth_tensor"] = depth
    else:
        attrs["depth"] = int(depth)
    return append_defined("one_hot", ins, attrs, stop_gradient=True)["Out"][0]


def flatten(x, axis=1, name=None):
    helper = LayerHelper("flatten", name=name)
    out = out_var(helper, x.dtype)
    helper.append_op(type="flatten2", inputs={"X": [x]}, outputs={"Out": [out], "XShape": [_xshape(helper, x)]},
                     attrs={"axis": axis})
    return out


def squeeze(input, axes, name=None):
    helper = LayerHelper("squeeze", name=name)
    out = out_var(helper, input.dtype, lod_level=input.lod_level)   # the op shares X's LoD, as in Paddle
    helper.append_op(type="squeeze2", inputs={"X": [input]},
                     outputs={"Out": [out], "XShape": [_xshape(helper, input)]}, attrs={"axes": list(axes)})
    return out


def unsqueeze(input, axes, name=None):
    helper = LayerHelper("unsqueeze", name=name)
    out = out_var(helper, input.dtype, lod_level=input.lod_level)
    helper.append_op(type="unsqueeze2", inputs={"X": [input]},
                     outputs={"Out": [out], "XShape": [_xshape(helper, input)]}, attrs={"axes": list(axes)})
    return out


def stack(x, axis=0):
    x = [x] if not isinstance(x, (list, tuple)) else list(x)
    return single(append_defined("stack", {"X": x}, {"axis": axis}), "Y")


def gather(input, index, overwrite=True):
    return single(append_defined("gather", {"X": input, "Index": index}, {"overwrite": overwrite}))


def expand(x, expand_times, name=None):
    return single(append_defined("expand", {"X": x}, {"expand_times": list(expand_times)}, name=name))


def l2_normalize(x, axis, epsilon=1e-12, name=None):
    return single(append_defined("norm", {"X": x}, {"axis": 1 if axis is None else axis, "epsilon": epsilon},
                                 helper=LayerHelper("l2_normalize", name=name), stop_gradient={"Norm"}))


def autoincreased_step_counter(counter_name=None, begin=1, step=1):
    """A persistable int64 [1] counter incremented at the start of every run of the main program."""
    helper = LayerHelper("global_step_counter")
    if counter_name is None:
        counter_name = "@STEP_COUNTER@"
    counter, is_new = helper.create_or_get_global_variable(name=counter_name, dtype="int64", shape=[1],
                                                           persistable=True)
    if is_new:
        helper.set_variable_initializer(counter, initializer=Constant(value=begin - 1, force_cpu=True))
        helper.main_program.global_block()._prepend_op(type="increment", inputs={"X": [counter]},
                                                       outputs={"Out": [counter]}, attrs={"step": float(step)})
        counter.stop_gradient = True
    return counter


def merge_selected_rows(x, name=None):
    """A row-sparse (SelectedRows) variable with its repeated rows added up, rows sorted."""
    helper = LayerHelper("merge_selected_rows", name=name)
    out = helper.create_variable(name=unique_name.generate("merge_selected_rows.tmp"), dtype=x.dtype,
                                 shape=x.shape, type=VarType.SELECTED_ROWS)
    helper.append_op(type="merge_selected_rows", inputs={"X": [x]}, outputs={"Out": [out]})
    return out


def get_tensor_from_selected_rows(x, name=None):
    """The values of a row-sparse variable as a dense [rows, ...] tensor (one row per entry of rows)."""
    check_variable(x, "x", "get_tensor_from_selected_rows")
    if x.type != VarType.SELECTED_ROWS:     # Paddle 1.8.5's check
        raise TypeError("The type of 'x' in get_tensor_from_selected_rows must be SELECTED_ROWS.")
    helper = LayerHelper("get_tensor_from_selected_rows", name=name)
    out = out_var(helper, x.dtype, [-1] + list(x.shape[1:]))
    helper.append_op(type="get_tensor_from_selected_rows", inputs={"X": [x]}, outputs={"Out": [out]})
    return out
