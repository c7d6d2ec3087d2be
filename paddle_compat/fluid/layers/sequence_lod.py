"""Layers on variable-length sequences (LoD input): sequence_pool (+ first/last step), sequence_softmax,
sequence_concat, sequence_expand. Paddle's op types and attributes.

A variable carries a LoD at run time only when it is declared with lod_level > 0 (data layers, and what
ops compute from them), so these builders check that statically and say how to fix it.
"""

from .helpers import append_defined, check_variable, single

__all__ = ["sequence_pool", "sequence_first_step", "sequence_last_step", "sequence_softmax", "sequence_concat",
           "sequence_expand"]

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
