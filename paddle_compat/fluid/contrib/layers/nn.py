"""Contrib layers: partial_sum, partial_concat."""

from ...layers.helpers import append_defined, check_variable, single

__all__ = ["partial_sum", "partial_concat"]


def _inputs(input, layer):
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
