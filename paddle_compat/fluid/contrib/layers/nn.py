"""Paddle's fluid.contrib.layers.nn: partial_sum, partial_concat, fused_elemwise_activation, rank_attention,
fused_embedding_seq_pool, shuffle_batch, tdm_child, match_matrix_tensor, sequence_topk_avg_pooling, tree_conv,
var_conv_2d, multiclass_nms2, search_pyramid_hash (ops in paddle_compat/ops/defs/contrib_ops.py
and pyramid_hash.py)."""

import numpy as np

from ....ir import Variable
from ...initializer import Constant
from ...layer_helper import LayerHelper
from ...layers.utils import append_defined, check_variable, single
from ...param_attr import ParamAttr

__all__ = ["partial_sum", "partial_concat", "fused_elemwise_activation", "rank_attention",
           "fused_embedding_seq_pool", "shuffle_batch", "tdm_child", "match_matrix_tensor",
           "sequence_topk_avg_pooling", "tree_conv", "var_conv_2d", "multiclass_nms2", "search_pyramid_hash"]


def _inputs(input, layer):
    if isinstance(input, Variable):     # one Variable stands for a list of one (as in Paddle)
        input = [input]
    if not isinstance(input, (list, tuple)) or not input:
        raise TypeError("%s: input must be a non-empty list of Variables" % layer)
    for i, x in enumerate(input):
        check_variable(x, "input[%d]" % i, layer)
    return list(input)


def partial_concat(input, start_index=0, length=-1):
    """Columns [start_index, start_index + length) of each 2-D input, concatenated (length -1: to the end)."""
    attrs = {"start_index": int(start_index), "length": int(length)}
    return single(append_defined("partial_concat", {"X": _inputs(input, "partial_concat")}, attrs))


def partial_sum(input, start_index=0, length=-1):
    """Columns [start_index, start_index + length) of each 2-D input, summed (length -1: to the end)."""
    attrs = {"start_index": int(start_index), "length": int(length)}
    return single(append_defined("partial_sum", {"X": _inputs(input, "partial_sum")}, attrs))


def fused_elemwise_activation(x, y, functor_list, axis=-1, scale=0.0, save_intermediate_out=True):
    """functor_list [binary, unary]: binary(x, unary(y)); [unary, binary]: unary(binary(x, y)). Binary:
    elementwise_add, elementwise_mul; unary: scale (by `scale`), relu, tanh, sigmoid."""
    check_variable(x, "x", "fused_elemwise_activation")
    check_variable(y, "y", "fused_elemwise_activation")
    if isinstance(functor_list, str):
        functor_list = functor_list.split(",")
    if not isinstance(functor_list, list) or len(functor_list) != 2:
        raise ValueError("functor_list should be a list of str, and the length should be 2.")
    attrs = {"axis": int(axis), "scale": float(scale), "save_intermediate_out": bool(save_intermediate_out),
             "functor_list": list(functor_list)}
    return single(append_defined("fused_elemwise_activation", {"X": x, "Y": y}, attrs))


def rank_attention(input, rank_offset, rank_param_shape, rank_param_attr, max_rank=3):
    """Out [N, C]: each instance's neighbours (rank_offset [N, 1 + 2 max_rank] of (rank, then (rank, row) per
    neighbour)) through the RankParam block of its (rank, neighbour rank) pair; RankParam is rank_param_shape
    [max_rank^2 * D, C]."""
    check_variable(input, "input", "rank_attention")
    check_variable(rank_offset, "rank_offset", "rank_attention")
    if input.shape[1] * max_rank * max_rank != rank_param_shape[0]:
        raise ValueError("rank_attention: rank_param_shape[0] must be input width * max_rank^2 = %d, got %s"
                         % (input.shape[1] * max_rank * max_rank, list(rank_param_shape)))
    helper = LayerHelper("rank_attention", param_attr=rank_param_attr)
    param = helper.create_parameter(attr=helper.param_attr, shape=list(rank_param_shape), dtype=input.dtype)
    param.stop_gradient = False
    return single(append_defined("rank_attention", {"X": input, "RankOffset": rank_offset, "RankParam": param},
                                 {"MaxRank": int(max_rank)}, helper=helper))


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


def search_pyramid_hash(input, num_emb, space_len, pyramid_layer, rand_len, drop_out_percent, is_training,
                        use_filter, white_list_len, black_list_len, seed, lr, param_attr=None, param_attr_wl=None,
                        param_attr_bl=None, name=None, distribute_update_vars=None, dtype="float32"):
    """Pyramid hash embedding of int32 id sequences (LoD): one num_emb row per kept n-gram, n = 2 ..
    pyramid_layer, read from the hashed table W [space_len + rand_len, 1]."""
    check_variable(input, "input", "search_pyramid_hash")
    helper = LayerHelper("search_pyramid_hash", param_attr=param_attr, name=name)
    w = helper.create_parameter(attr=helper.param_attr, shape=[space_len + rand_len, 1], dtype=dtype,
                                is_bias=False)
    w.stop_gradient = True
    inputs = {"X": input, "W": w}
    # The filter lists, [len, 1] each, for lengths > 0. (Paddle also makes an empty [0, 1] black list for
    # black_list_len=0; the op never reads it, and a parameter of no rows cannot be initialised here.)
    for slot, n, pattr in (("WhiteList", white_list_len, param_attr_wl), ("BlackList", black_list_len, param_attr_bl)):
        if n > 0:
            p = helper.create_parameter(attr=ParamAttr._to_attr(pattr), shape=[n, 1], dtype=dtype, is_bias=False)
            p.stop_gradient = True
            inputs[slot] = p
    update_vars = ""
    if distribute_update_vars:
        if not isinstance(distribute_update_vars, list):
            raise TypeError("search_pyramid_hash: distribute_update_vars must be a list of parameter names, got %r"
                            % (distribute_update_vars,))
        own = [a.name for a in (param_attr, param_attr_wl, param_attr_bl) if a is not None]
        for p in distribute_update_vars:
            if p not in own:
                raise ValueError("search_pyramid_hash: distribute_update_vars names %r, which is not one of "
                                 "this layer's parameters %s" % (p, own))
        update_vars = ",".join(distribute_update_vars)
    attrs = {"num_emb": num_emb, "space_len": space_len, "pyramid_layer": pyramid_layer, "rand_len": rand_len,
             "drop_out_percent": drop_out_percent, "is_training": is_training, "use_filter": use_filter,
             "white_list_len": white_list_len, "black_list_len": black_list_len, "seed": seed, "lr": lr,
             "distribute_update_vars": update_vars}
    outs = append_defined("pyramid_hash", inputs, attrs, helper=helper, stop_gradient=("X_Temp_Out", "DropPos"))
    return outs["Out"][0]
