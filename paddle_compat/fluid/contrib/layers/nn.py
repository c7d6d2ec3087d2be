"""Contrib layers: partial_sum, partial_concat, fused_elemwise_activation, rank_attention."""

from ....ir import Variable
from ...layer_helper import LayerHelper
from ...layers.helpers import append_defined, check_variable, single

__all__ = ["partial_sum", "partial_concat", "fused_elemwise_activation", "rank_attention"]


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
