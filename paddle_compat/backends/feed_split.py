"""Splitting one feed dict across the places of a data-parallel run, by Paddle's rule.

Every place gets batch // n samples along dim 0 and the last place also gets the remainder
(3 samples on 2 places -> [0] and [1, 2]); LoD tensors split by top-level sequences. Fewer samples
than places is an error, as in Paddle. A list of dicts is taken as one dict per place.
"""

import numpy as np

from ..ir import LoDTensor, ScopeVar, dtype_name

__all__ = ["split_feed", "split_sizes"]


def split_sizes(batch, n):
    step = batch // n
    return [step] * (n - 1) + [step + batch % n]


def split_feed(feed, n, block):
    if isinstance(feed, (list, tuple)):
        if len(feed) != n:
            raise ValueError("feed is a list of %d dicts but the program runs on %d places (one dict per place)"
                             % (len(feed), n))
        for i, f in enumerate(feed):
            if not isinstance(f, dict):
                raise TypeError("feed[%d] must be a dict {variable name: value}, got %s" % (i, type(f).__name__))
        return [dict(f) for f in feed]
    if feed is None:
        return [{} for _ in range(n)]
    if not isinstance(feed, dict):
        raise TypeError("feed must be a dict or a list of per-place dicts, got %s" % type(feed).__name__)
    parts = [{} for _ in range(n)]
    for name, value in feed.items():
        for p, piece in enumerate(_split_value(name, value, n, block)):
            parts[p][name] = piece
    return parts


def _split_value(name, value, n, block):
    if isinstance(value, LoDTensor):
        t, lod = value._holder.value, value._holder.lod
        if t is None:
            raise ValueError("feed '%s': the LoDTensor holds no data" % name)
        if lod:
            return [LoDTensor(_holder=ScopeVar(value=t[r0:r1], lod=sub))
                    for (r0, r1), sub in _split_lod(name, lod, n)]
        return [LoDTensor(_holder=ScopeVar(value=piece)) for piece in _split_rows(name, t, n)]
    if not hasattr(value, "shape") or isinstance(value, (list, tuple)):
        v = block._find_var_recursive(name)
        value = np.asarray(value, dtype=dtype_name(v.dtype) if v is not None else None)
    return _split_rows(name, value, n)


def _check(name, batch, n):
    if batch < n:
        raise ValueError("feed '%s' has %d samples, fewer than the %d places it is split across (CPU_NUM or the "
                         "number of GPUs): drop the last incomplete batch, or feed a list of one dict per place"
                         % (name, batch, n))


def _split_rows(name, value, n):
    if len(value.shape) == 0:
        raise ValueError("feed '%s' is a scalar; it cannot be split across %d places (feed a list of one dict "
                         "per place)" % (name, n))
    _check(name, value.shape[0], n)
    out, start = [], 0
    for size in split_sizes(value.shape[0], n):
        out.append(value[start:start + size])
        start += size
    return out


def _split_lod(name, lod, n):
    """[(row range, lod of the piece)] splitting the top-level sequences."""
    _check(name, len(lod[0]) - 1, n)
    out, start = [], 0
    for size in split_sizes(len(lod[0]) - 1, n):
        lo, hi = start, start + size
        sub = []
        for level in lod:
            piece = level[lo:hi + 1]
            sub.append([o - piece[0] for o in piece])
            lo, hi = piece[0], piece[-1]
        out.append(((lo, hi), sub))
        start += size
    return out
