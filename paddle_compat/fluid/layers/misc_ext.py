"""hash, filter_by_instag, similarity_focus, and random_crop of Paddle 1.8, with ops
defined in paddle_compat/ops/defs/misc_ext_ops.py. Paddle 1.8's signatures and defaults."""

import numpy as np

from ...ir import VarType, Variable, convert_dtype
from .helpers import append_defined, check_variable

__all__ = ["hash", "filter_by_instag", "similarity_focus", "random_crop"]


def hash(input, hash_size, num_hash=1, name=None):  # noqa: A001 (Paddle's name)
    """num_hash xxHash64 values (seeds 0..num_hash-1) of each row of the integer input, modulo hash_size:
    [..., D] -> [..., num_hash, 1]. (Paddle 1.8.5's own layer rejects every call through a broken type check;
    this one takes ints as documented.)"""
    check_variable(input, "input", "hash")
    if convert_dtype(input.dtype) not in ("int32", "int64"):
        raise TypeError("hash: input %s must be int32 or int64, got %s" % (input.name, input.dtype))
    if not isinstance(hash_size, int) or not isinstance(num_hash, int) or hash_size <= 0 or num_hash <= 0:
        raise TypeError("hash: hash_size and num_hash must be positive ints, got %r, %r" % (hash_size, num_hash))
    outs = append_defined("hash", {"X": input}, {"num_hash": num_hash, "mod_by": hash_size}, name=name,
                          stop_gradient=True)
    return outs["Out"][0]


def filter_by_instag(ins, ins_tag, filter_tag, is_lod, out_val_if_empty=0):
    """Keeps the instances of `ins` (rows, or LoD sequences when is_lod) whose tags (ins_tag's LoD sequences)
    include one of filter_tag. Returns [out, loss_weight]."""
    check_variable(ins, "ins", "filter_by_instag")
    check_variable(ins_tag, "ins_tag", "filter_by_instag")
    check_variable(filter_tag, "filter_tag", "filter_by_instag")
    outs = append_defined("filter_by_instag", {"Ins": ins, "Ins_tag": ins_tag, "Filter_tag": filter_tag},
                          {"is_lod": bool(is_lod), "out_val_if_empty": out_val_if_empty})
    outs["LossWeight"][0].stop_gradient = True
    outs["IndexMap"][0].stop_gradient = True
    return [outs["Out"][0], outs["LossWeight"][0]]


def similarity_focus(input, axis, indexes, name=None):
    """A 0/1 mask of input's shape: for each index along axis, the greedy row- and column-unique maxima of that
    slice, spread across the axis (see ops/defs/misc_ext_ops.py)."""
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


