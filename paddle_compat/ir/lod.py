"""LoD (level of detail): the sequence offsets a LoDTensor carries, as Paddle shows them (lists of int offsets)
and as the generated code carries them (int64 torch tensors on the data's device)."""

import numpy as np

from .lazy import torch

__all__ = ["lod_as_lists", "lod_as_tensors", "check_lod", "lengths_to_offsets"]


def _lod_level_list(level):
    """One LoD level (list, numpy array or torch tensor of offsets) -> list of python ints."""
    if hasattr(level, "tolist"):
        return [int(x) for x in level.tolist()]
    return [int(x) for x in level]


def lod_as_lists(lod):
    """A LoD as Paddle shows it: a list of levels, each a list of int offsets ([] when there is none)."""
    return [_lod_level_list(level) for level in (lod or ())]


def lod_as_tensors(lod, device="cpu"):
    """A LoD as the generated code carries it: a tuple of int64 torch tensors of offsets on `device`
    (None when there is no LoD). Kernels index with them directly, so they live where the data lives."""
    if not lod:
        return None
    out = []
    for level in lod:
        if isinstance(level, torch.Tensor):
            t = level if level.dtype == torch.int64 else level.to(torch.int64)
        else:
            t = torch.as_tensor(np.asarray(level, dtype=np.int64))
        if device != "cpu" or not t.is_cpu:
            if t.device != torch.device(device):
                t = t.to(device)
        out.append(t)
    return tuple(out)


def check_lod(lod, height=None):
    """Paddle's CheckLoD: each level starts at 0, never decreases, ends where the next level (or the
    tensor's rows) ends. Returns an error string, or None when the LoD is valid."""
    for i, level in enumerate(lod):
        if len(level) < 2:
            return "LoD level %d needs at least 2 offsets, got %s" % (i, level)
        if level[0] != 0:
            return "LoD level %d must start at 0, got %s" % (i, level)
        if any(b < a for a, b in zip(level, level[1:])):
            return "LoD level %d must be non-decreasing, got %s" % (i, level)
        if i + 1 < len(lod):
            if level[-1] != len(lod[i + 1]) - 1:
                return ("LoD level %d ends at %d but level %d holds %d sequences"
                        % (i, level[-1], i + 1, len(lod[i + 1]) - 1))
        elif height is not None and level[-1] != height:
            return "the last LoD level ends at %d but the tensor has %d rows" % (level[-1], height)
    return None


def lengths_to_offsets(lengths):
    """Sequence lengths -> int64 offsets [0, l0, l0+l1, ...] (numpy)."""
    lens = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if lens.size and lens.min() < 0:
        raise ValueError("sequence lengths must be >= 0, got %s" % (list(lengths),))
    offs = np.empty(lens.size + 1, dtype=np.int64)
    offs[0] = 0
    np.cumsum(lens, out=offs[1:])
    return offs
