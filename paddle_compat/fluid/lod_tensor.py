"""create_lod_tensor / create_random_int_lodtensor (Paddle's helpers for variable-length data)."""

import numpy as np

from ..ir import LoDTensor

__all__ = ["create_lod_tensor", "create_random_int_lodtensor"]


def _flatten(data, depth, lens, level=0):
    """Flatten `depth` levels of nested sequences into rows, recording each level's lengths."""
    out = []
    for seq in data:
        if not hasattr(seq, "__len__"):
            raise TypeError("create_lod_tensor: expected a sequence at nesting level %d, got %r" % (level, seq))
        lens[level].append(len(seq))
        if depth > 1:
            out.extend(_flatten(seq, depth - 1, lens, level + 1))
        else:
            out.extend(seq)
    return out


def create_lod_tensor(data, recursive_seq_lens, place):
    """A LoDTensor from `data` and its sequence lengths per level, e.g. [[2, 3]] for two sequences of 2
    and 3 rows. data: a numpy array (rows of all sequences, stacked), a LoDTensor (its data is reused),
    or a list of sequences (e.g. lists of word ids; the rows get a trailing dim of 1, as in Paddle)."""
    if not isinstance(recursive_seq_lens, (list, tuple)) or \
            any(not isinstance(level, (list, tuple, np.ndarray)) for level in recursive_seq_lens):
        raise TypeError("create_lod_tensor: recursive_seq_lens must be a list of levels, each a list of "
                        "lengths, e.g. [[2, 3]]; got %r" % (recursive_seq_lens,))
    if isinstance(data, LoDTensor):
        return create_lod_tensor(np.array(data), recursive_seq_lens, place)
    if isinstance(data, list):
        depth = len(recursive_seq_lens)
        lens = [[] for _ in range(depth)]
        flat = _flatten(data, depth, lens)
        if [list(map(int, level)) for level in recursive_seq_lens] != lens:
            raise ValueError("create_lod_tensor: the sequences have lengths %s but recursive_seq_lens says %s"
                             % (lens, [list(level) for level in recursive_seq_lens]))
        arr = np.array(flat)   # dtype inferred as Paddle does (ints -> int64, floats -> float64)
        arr = arr.reshape(arr.shape + (1,))
        return create_lod_tensor(arr, recursive_seq_lens, place)
    if not isinstance(data, np.ndarray):
        raise TypeError("create_lod_tensor: data must be a numpy array, a list of sequences or a LoDTensor, "
                        "got %s" % type(data).__name__)
    t = LoDTensor()
    t.set(data, place)
    t.set_recursive_sequence_lengths(recursive_seq_lens)
    if not t.has_valid_recursive_sequence_lengths():
        raise ValueError("create_lod_tensor: sequence lengths %s do not add up to the %d rows of data"
                         % ([list(level) for level in recursive_seq_lens], data.shape[0] if data.ndim else 0))
    return t


def create_random_int_lodtensor(recursive_seq_lens, base_shape, place, low, high):
    """Random ints in [low, high] with shape [total rows] + base_shape and the given sequence lengths."""
    total = sum(recursive_seq_lens[-1])
    data = np.random.randint(low, high + 1, [total] + list(base_shape)).astype("int64")
    return create_lod_tensor(data, recursive_seq_lens, place)
