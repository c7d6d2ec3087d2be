"""Splitting one feed dict across the places of a data-parallel run, by Paddle's rule.

Every place gets batch // n samples along dim 0 and the last place also gets the remainder
(3 samples on 2 places -> [0] and [1, 2]); LoD tensors split by top-level sequences. A list of dicts is taken
as one dict per place. A persistable variable fed one sample (a learning rate) is copied to every place.

Fewer samples (or dicts) than places is an error for a training program, as in Paddle; a program without
backward or optimizer ops (inference) runs on the first k places only, one sample each (Paddle 1.8's partial
feed), and its fetches merge those k places.
"""

import numpy as np

from ..ir import LoDTensor, ScopeVar, dtype_name
from ..ir.errors import EnforceNotMet

__all__ = ["split_feed", "split_sizes", "FeedSplitError"]


class FeedSplitError(EnforceNotMet, ValueError):
    """A feed that cannot be split across the places. Paddle raises EnforceNotMet; it is also a ValueError (a
    wrong argument), which is what this package raised before."""


def split_sizes(batch, n):
    step = batch // n
    return [step] * (n - 1) + [step + batch % n]


def split_feed(feed, n, block, partial=False):
    """[per-place feed dict, ...]: n of them, or with `partial` (inference) possibly fewer."""
    if isinstance(feed, (list, tuple)):
        if len(feed) > n or (len(feed) < n and not partial) or not feed:
            raise FeedSplitError("feed is a list of %d dicts but the program runs on %d places (one dict per "
                                 "place%s)" % (len(feed), n, "" if partial else "; a training program needs "
                                               "all of them: a DataLoader needs drop_last=True"))
        for i, f in enumerate(feed):
            if not isinstance(f, dict):
                raise TypeError("feed[%d] must be a dict {variable name: value}, got %s" % (i, type(f).__name__))
        return [dict(f) for f in feed]
    if feed is None:
        return [{} for _ in range(n)]
    if not isinstance(feed, dict):
        raise TypeError("feed must be a dict or a list of per-place dicts, got %s" % type(feed).__name__)
    pieces, lens = {}, {True: set(), False: set()}
    for name, value in feed.items():
        var = block._find_var_recursive(name)
        persistable = var is not None and var.persistable
        got = _split_value(name, value, n, block, allow_fewer=partial or persistable)
        if persistable and len(got) == 1 and n > 1:
            got = got + [_copy(got[0]) for _ in range(n - 1)]
        if persistable and len(got) != n and not partial:
            raise FeedSplitError(
                "feed '%s' is persistable and has %d samples for %d places: feed one sample (copied to every "
                "place) or one per place" % (name, len(got), n))
        lens[persistable].add(len(got))
        pieces[name] = got
    for persistable, kind in ((False, "non-persistable"), (True, "persistable")):
        if len(lens[persistable]) > 1:
            raise FeedSplitError("the %s feeds split into different numbers of places %s: feed the same number "
                                 "of samples to each" % (kind, sorted(lens[persistable])))
    k = min(lens[False] or lens[True] or {n})
    if lens[True] and lens[False] and min(lens[True]) < k:
        raise FeedSplitError("the persistable feeds cover %d places, fewer than the %d the other feeds cover"
                             % (min(lens[True]), k))
    parts = [{} for _ in range(k)]
    for name, got in pieces.items():
        for p in range(k):
            parts[p][name] = got[p]
    return parts


def _copy(value):
    if isinstance(value, LoDTensor):
        return LoDTensor(_holder=ScopeVar(value=value._holder.value.clone(), lod=value._holder.lod))
    return value.copy()


def _split_value(name, value, n, block, allow_fewer=False):
    if isinstance(value, LoDTensor):
        t, lod = value._holder.value, value._holder.lod
        if t is None:
            raise ValueError("feed '%s': the LoDTensor holds no data" % name)
        if lod:
            return [LoDTensor(_holder=ScopeVar(value=t[r0:r1], lod=sub))
                    for (r0, r1), sub in _split_lod(name, lod, n, allow_fewer)]
        return [LoDTensor(_holder=ScopeVar(value=piece)) for piece in _split_rows(name, t, n, allow_fewer)]
    if not hasattr(value, "shape") or isinstance(value, (list, tuple)):
        v = block._find_var_recursive(name)
        value = np.asarray(value, dtype=dtype_name(v.dtype) if v is not None else None)
    return _split_rows(name, value, n, allow_fewer)


def _check(name, batch, n, allow_fewer):
    """How many places the batch covers: n, or with allow_fewer one sample each on the first `batch`."""
    if batch >= n:
        return n
    if allow_fewer and batch > 0:
        return batch
    raise FeedSplitError("feed '%s' has %d samples, fewer than the %d places it is split across (CPU_NUM or the "
                         "number of GPUs): drop the last incomplete batch, or feed a list of one dict per place"
                         % (name, batch, n))


def _split_rows(name, value, n, allow_fewer):
    if len(value.shape) == 0:
        raise FeedSplitError("feed '%s' is a scalar; it cannot be split across %d places (feed a list of one "
                             "dict per place)" % (name, n))
    n = _check(name, value.shape[0], n, allow_fewer)
    out, start = [], 0
    for size in split_sizes(value.shape[0], n):
        out.append(value[start:start + size])
        start += size
    return out


def _split_lod(name, lod, n, allow_fewer):
    """[(row range, lod of the piece)] splitting the top-level sequences."""
    n = _check(name, len(lod[0]) - 1, n, allow_fewer)
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
