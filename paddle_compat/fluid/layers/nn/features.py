"""Feature layers of CTR models: id hashing, instance-tag filtering, the continuous value model."""

from ....ir import convert_dtype
from ..utils import append_defined, check_variable

__all__ = ["continuous_value_model", "hash", "filter_by_instag"]


def continuous_value_model(input, cvm, use_cvm=True):
    return append_defined("cvm", {"X": input, "CVM": cvm}, {"use_cvm": use_cvm})["Y"][0]


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
