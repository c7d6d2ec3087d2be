"""op_freq_statistic(program): how often each op type, and each adjacent pair of op types, occurs."""

from collections import OrderedDict

from ...ir import Program

__all__ = ["op_freq_statistic"]


def op_freq_statistic(program):
    """(uni_op_freq, adj_2_op_freq): OrderedDicts sorted by count, most frequent first, as Paddle 1.8 returns.
    Pairs are 'a->b' where an output of an `a` op is an input of the next `b` op that reads it."""
    if not isinstance(program, Program):
        raise TypeError("op_freq_statistic needs a Program, got %s" % type(program).__name__)
    uni, adj = {}, {}
    producer = {}
    for op in program.global_block().ops:
        uni[op.type] = uni.get(op.type, 0) + 1
        pairs = set()
        for name in op.input_arg_names:
            if name in producer:
                pairs.add(producer[name] + "->" + op.type)
        for p in pairs:
            adj[p] = adj.get(p, 0) + 1
        for name in op.output_arg_names:
            producer[name] = op.type
    order = lambda d: OrderedDict(sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))  # noqa: E731
    return order(uni), order(adj)
