"""create_lod_tensor / create_random_int_lodtensor (Paddle's helpers for variable-length data)."""

import numpy as np

from .core import LoDTensor

__all__ = ["create_lod_tensor", "create_random_int_lodtensor"]


def create_lod_tensor(data, recursive_seq_lens, place):
    """data: a numpy array, a LoDTensor, or a list of sequences (lists of ids); recursive_seq_lens: lengths
    per level, e.g. [[2, 3]] for two sequences of 2 and 3 rows."""
    if isinstance(data, LoDTensor):
        return create_lod_tensor(np.array(data), recursive_seq_lens, place)
    if isinstance(data, list):
        flat = [x for seq in data for x in seq]
        lens = [len(seq) for seq in data]
        if [lens] != [list(recursive_seq_lens[-1])] and len(recursive_seq_lens) == 1:
            raise ValueError("create_lod_tensor: the sequences have lengths %s but recursive_seq_lens says %s"
                             % (lens, recursive_seq_lens))
        arr = np.array(flat, dtype=np.int64).reshape(len(flat), 1)
        return create_lod_tensor(arr, recursive_seq_lens, place)
    if not isinstance(data, np.ndarray):
        raise TypeError("create_lod_tensor: data must be a numpy array, list of sequences or LoDTensor")
    t = LoDTensor()
    t.set(data, place)
    t.set_recursive_sequence_lengths(recursive_seq_lens)
    if not t.has_valid_recursive_sequence_lengths():
        raise ValueError("create_lod_tensor: sequence lengths %s do not add up to the %d rows of data"
                         % (recursive_seq_lens, data.shape[0]))
    return t


def create_random_int_lodtensor(recursive_seq_lens, base_shape, place, low, high):
    total = sum(recursive_seq_lens[-1])
    data = np.random.randint(low, high + 1, [total] + list(base_shape)).astype("int64")
    return create_lod_tensor(data, recursive_seq_lens, place)
