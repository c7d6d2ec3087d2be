"""More contrib layers of Paddle 1.8: fused_embedding_seq_pool, shuffle_batch, tdm_child,
match_matrix_tensor, sequence_topk_avg_pooling (ops in paddle_compat/ops/defs/contrib_more_ops.py)."""

import numpy as np

from ....ir import Variable
from ...initializer import Constant
from ...layer_helper import LayerHelper
from ...layers.helpers import append_defined, check_variable

__all__ = ["fused_embedding_seq_pool", "shuffle_batch", "tdm_child", "match_matrix_tensor",
           "sequence_topk_avg_pooling", "tree_conv", "var_conv_2d", "multiclass_nms2"]


def fused_embedding_seq_pool(input, size, is_sparse=False, padding_idx=None, combiner="sum", param_attr=None,
                             dtype="float32"):
    """Embedding lookup summed over each LoD sequence: ids [T, k] (LoD) -> [num_sequences, k * size[1]]."""
    check_variable(input, "input", "fused_embedding_seq_pool")
    if combiner != "sum":
        raise ValueError("fused_embedding_seq_pool: combiner must be 'sum', got %r" % (combiner,))
    helper = LayerHelper("fused_embedding_seq_pool", param_attr=param_attr)
    w = helper.create_parameter(attr=helper.param_attr, shape=list(size), dtype=dtype, is_bias=False)
    pad = -1 if padding_idx is None else (padding_idx if padding_idx >= 0 else size[0] + padding_idx)
    outs = append_defined("fused_embedding_seq_pool", {"Ids": input, "W": w},
                          {"is_sparse": is_sparse, "combiner": combiner, "padding_idx": pad}, helper=helper)
    return outs["Out"][0]


def shuffle_batch(x, seed=None):
    """x's rows (all dimensions but the last) in a random order."""
    check_variable(x, "x", "shuffle_batch")
    helper = LayerHelper("shuffle_batch")
    if seed is None and helper.main_program.random_seed != 0:
        seed = helper.main_program.random_seed
    if seed is None:
        # numpy's global RNG, as Paddle 1.8 (a script's later numpy draws see the same state)
        seed = np.random.randint(-65536, 65535)
    attrs, seed_in = {}, None
    if isinstance(seed, int):
        attrs["startup_seed"] = seed
    elif isinstance(seed, Variable):
        seed_in = seed
    else:
        raise ValueError("shuffle_batch: seed must be an int or a Variable, got %r" % (seed,))
    outs = append_defined("shuffle_batch", {"X": x, "Seed": seed_in}, attrs, helper=helper)
    outs["ShuffleIdx"][0].stop_gradient = True
    outs["SeedOut"][0].stop_gradient = True
    return outs["Out"][0]


def tdm_child(x, node_nums, child_nums, param_attr=None, dtype="int32"):
    """Children of tree nodes (TDM): (child ids [.., child_nums], leaf mask), from the TreeInfo parameter
    [node_nums, 3 + child_nums] of rows (item_id, layer_id, parent_id, children...)."""
    check_variable(x, "x", "tdm_child")
    if dtype not in ("int32", "int64"):
        raise TypeError("tdm_child: dtype must be int32 or int64, got %r" % (dtype,))
    helper = LayerHelper("tdm_child", param_attr=param_attr)
    tree = helper.create_parameter(attr=helper.param_attr, shape=[node_nums, 3 + child_nums], dtype=dtype,
                                   default_initializer=Constant(0))
    tree.stop_gradient = True
    outs = append_defined("tdm_child", {"X": x, "TreeInfo": tree},
                          {"child_nums": child_nums, "dtype": 2 if dtype == "int32" else 3}, helper=helper,
                          stop_gradient=True)
    return outs["Child"][0], outs["LeafMask"][0]


def match_matrix_tensor(x, y, channel_num, act=None, param_attr=None, dtype="float32", name=None):
    """Matching matrices of LoD sequence pairs through W [h, channel_num, h]. Returns (out, tmp)."""
    check_variable(x, "x", "match_matrix_tensor")
    check_variable(y, "y", "match_matrix_tensor")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError("match_matrix_tensor: x and y need one hidden size, got %d and %d"
                         % (x.shape[-1], y.shape[-1]))
    helper = LayerHelper("match_matrix_tensor", param_attr=param_attr, act=act, name=name)
    h = x.shape[-1]
    w = helper.create_parameter(attr=helper.param_attr, shape=[h, channel_num, h], dtype=dtype, is_bias=False)
    outs = append_defined("match_matrix_tensor", {"X": x, "Y": y, "W": w}, {"dim_t": channel_num}, helper=helper)
    return helper.append_activation(outs["Out"][0]), outs["Tmp"][0]


def sequence_topk_avg_pooling(input, row, col, topks, channel_num):
    """Average of the top-k values of each row of each channel of per-sample [channel_num, rows, cols] maps,
    for every k in topks: [sum(rows), channel_num * len(topks)] with row's LoD."""
    for arg, v in (("input", input), ("row", row), ("col", col)):
        check_variable(v, arg, "sequence_topk_avg_pooling")
    if not isinstance(topks, (list, tuple)) or not topks or any(int(t) <= 0 for t in topks):
        raise ValueError("sequence_topk_avg_pooling: topks must be a list of positive ints, got %r" % (topks,))
    outs = append_defined("sequence_topk_avg_pooling", {"X": input, "ROW": row, "COLUMN": col},
                          {"topks": [int(t) for t in topks], "channel_num": int(channel_num)})
    outs["pos"][0].stop_gradient = True
    return outs["Out"][0]


def tree_conv(nodes_vector, edge_set, output_size, num_filters=1, max_depth=2, act="tanh", param_attr=None,
              bias_attr=None, name=None):
    """Tree-based convolution (TBCNN) over nodes_vector [batch, nodes, feature] and edge_set [batch, edges, 2]
    of 1-based (parent, child) pairs ended by (0, 0): [batch, nodes, output_size, num_filters]."""
    check_variable(nodes_vector, "nodes_vector", "tree_conv")
    check_variable(edge_set, "edge_set", "tree_conv")
    helper = LayerHelper("tree_conv", param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    w = helper.create_parameter(attr=helper.param_attr, shape=[nodes_vector.shape[2], 3, output_size, num_filters],
                                dtype=nodes_vector.dtype, is_bias=False)
    outs = append_defined("tree_conv", {"NodesVector": nodes_vector, "EdgeSet": edge_set, "Filter": w},
                          {"max_depth": max_depth}, helper=helper)
    out = outs["Out"][0]
    if helper.bias_attr:
        out = helper.append_bias_op(out)
    return helper.append_activation(out)


def var_conv_2d(input, row, col, input_channel, output_channel, filter_size, stride=1, param_attr=None, act=None,
                dtype="float32", name=None):
    """Convolution over per-sample [input_channel, rows, cols] maps of varying size (LoD): each sample's
    output is [output_channel, ceil(rows / stride_h), ceil(cols / stride_w)], flattened (LoD)."""
    for arg, v in (("input", input), ("row", row), ("col", col)):
        check_variable(v, arg, "var_conv_2d")
    fs = [filter_size, filter_size] if isinstance(filter_size, int) else list(filter_size)
    st = [stride, stride] if isinstance(stride, int) else list(stride)
    helper = LayerHelper("var_conv_2d", param_attr=param_attr, act=act, name=name)
    w = helper.create_parameter(attr=helper.param_attr, shape=[output_channel, input_channel * fs[0] * fs[1]],
                                dtype=dtype)
    outs = append_defined("var_conv_2d", {"X": input, "ROW": row, "COLUMN": col, "W": w},
                          {"InputChannel": input_channel, "OutputChannel": output_channel, "StrideH": st[0],
                           "StrideW": st[1], "KernelH": fs[0], "KernelW": fs[1]}, helper=helper)
    outs["Col"][0].stop_gradient = True
    return helper.append_activation(outs["Out"][0])


def multiclass_nms2(bboxes, scores, score_threshold, nms_top_k, keep_top_k, nms_threshold=0.3, normalized=True,
                    nms_eta=1., background_label=0, return_index=False, name=None):
    """Per-class non-maximum suppression of bboxes [N, M, 4] scored by scores [N, C, M]: rows (label, score,
    x1, y1, x2, y2) per image (LoD), and with return_index the boxes' indices (image * M + box)."""
    check_variable(bboxes, "bboxes", "multiclass_nms2")
    check_variable(scores, "scores", "multiclass_nms2")
    outs = append_defined("multiclass_nms2", {"BBoxes": bboxes, "Scores": scores},
                          {"background_label": background_label, "score_threshold": float(score_threshold),
                           "nms_top_k": nms_top_k, "nms_threshold": float(nms_threshold), "nms_eta": float(nms_eta),
                           "keep_top_k": keep_top_k, "normalized": bool(normalized)}, name=name, stop_gradient=True)
    if return_index:
        return outs["Out"][0], outs["Index"][0]
    return outs["Out"][0]
