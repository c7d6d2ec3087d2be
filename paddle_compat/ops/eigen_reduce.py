"""Sums and means in the order Paddle 1.8's CPU kernels take them (Eigen 3.3 with AVX), for float32/float64.

Paddle 1.8 reduces with Eigen, which does not sum pairwise. A reduction over all elements keeps one accumulator
per SIMD lane (8 floats, 4 doubles), adds the elements lane by lane in order, adds the leftover elements (fewer
than a lane count) one by one, then folds the lanes in a fixed tree; a reduction over some dimensions is a plain
running sum in index order, the first reduced dimension varying fastest (both checked bit for bit against
Paddle 1.8.5: tests/data/paddle18/make_eigen_reduce.py). Over a million elements that
running sum is off from the exact sum by ~1e-4 relative, and a gradient clip's global norm carries that into
every update, so a model whose clip is active drifts from Paddle's within steps unless the sums are taken the
same way. torch's sums (cascaded, more accurate) stay in use on GPU and for other dtypes.

The values are computed with numpy (whose reductions over a non-innermost axis are plain running sums), the
per-lane running sums of a large float32 reduction by torch's embedding_bag (the same order, 2-4x faster; checked
once per process); the gradient is the usual one (ones, or 1/n for a mean).
"""

import numpy as np

from ..ir.lazy import torch

__all__ = ["reduce_sum", "applies"]

_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}


def _fold(p):
    """Eigen's predux of one accumulator per lane (AVX): 8 lanes fold to 4 (a[i] + a[i+4]), then
    (b0 + b2) + (b1 + b3)."""
    if p.shape[-1] == 8:
        p = p[..., :4] + p[..., 4:]
    return (p[..., 0] + p[..., 2]) + (p[..., 1] + p[..., 3])


_FAST_MIN = 1 << 16      # elements: below this numpy's loop costs less than the bag's set-up
_fast = {}


def _lane_sums_np(a, rows, k, lanes):
    # one accumulator per lane, each a running sum down its column (numpy sums axis 1 of 3 in order)
    return np.add.reduce(a.reshape(rows, k, lanes), axis=1, dtype=a.dtype)


def _lane_sums_bag(a, rows, k, lanes):
    """The same running sums by torch's embedding_bag (mode sum): each row's k packets are one bag, added
    into zeroed accumulators one packet after the other in order, 8 float32 lanes in one vector register
    (fbgemm's kernel): 2-3x numpy's loop, which steps through the packets 8 elements at a time."""
    w = torch.from_numpy(np.ascontiguousarray(a).reshape(rows * k, lanes))
    idx = _fast.get("arange")
    if idx is None or idx.numel() < rows * k:
        idx = _fast["arange"] = torch.arange(max(rows * k, _FAST_MIN), dtype=torch.int64)
    offsets = torch.arange(0, rows * k, k, dtype=torch.int64)
    return torch.nn.functional.embedding_bag(idx[:rows * k], w, offsets, mode="sum").numpy()


def _bag_agrees():
    """Whether this torch's embedding_bag sums in the order _lane_sums_np does, bit for bit, on a probe
    whose sums change with any other order (magnitudes 1e-8..1e8, signed zeros, a ragged count): checked
    once per process; where it does not, numpy's loop stays in use."""
    ok = _fast.get("ok")
    if ok is None:
        rng = np.random.RandomState(1)
        probe = (rng.randn(3 * 1031, 8) * 10.0 ** rng.randint(-8, 9, size=(3 * 1031, 8))).astype(np.float32)
        probe[rng.rand(*probe.shape) < 0.05] = -0.0
        probe[:, 3] = -0.0
        try:
            ok = _lane_sums_bag(probe, 3, 1031, 8).tobytes() == _lane_sums_np(probe, 3, 1031, 8).tobytes()
        except (RuntimeError, TypeError, ValueError):
            ok = False
        _fast["ok"] = ok
    return ok


def _rows(a):
    """Eigen's vectorized reducer over each row of a C-contiguous 2-D array -> 1-D array of row sums."""
    rows, n = a.shape
    lanes = _LANES[a.dtype]
    vec = n // lanes * lanes
    if vec:
        part = a[:, :vec]
        if lanes == 8 and rows * vec >= _FAST_MIN and _bag_agrees():
            p = _lane_sums_bag(part, rows, vec // lanes, lanes)
        else:
            p = _lane_sums_np(part, rows, vec // lanes, lanes)
        packed = _fold(p)
    else:
        packed = np.zeros(rows, a.dtype)
    tail = np.zeros(rows, a.dtype)
    for j in range(vec, n):
        tail = tail + a[:, j]
    return tail + packed


def _running(a, dims):
    """A running sum over `dims` in Eigen's generic order: the first reduced dimension varies fastest."""
    keep = [d for d in range(a.ndim) if d not in dims]
    moved = np.transpose(a, list(reversed(dims)) + keep)
    flat = np.ascontiguousarray(moved).reshape((-1,) + tuple(a.shape[d] for d in keep))
    return np.add.reduce(flat, axis=0, dtype=a.dtype)


def _all(a, mean):
    """_value over every dimension of a C-contiguous array (a step's loss mean: the short path). The additions
    of _rows over one row, on numpy scalars (a handful of calls: a step pays them with the loss every time)."""
    flat = a.reshape(-1)
    n = flat.shape[0]
    lanes = _LANES[a.dtype]
    vec = n - n % lanes
    zero = a.dtype.type(0)
    packed = zero
    if vec:
        if lanes == 8 and vec >= _FAST_MIN and _bag_agrees():
            p = _lane_sums_bag(flat[:vec], 1, vec // lanes, lanes)[0]
        else:
            p = np.add.reduce(flat[:vec].reshape(vec // lanes, lanes), axis=0, dtype=a.dtype)
        if lanes == 8:
            p = p[:4] + p[4:]
        packed = (p[0] + p[2]) + (p[1] + p[3])
    tail = zero
    for j in range(vec, n):
        tail = tail + flat[j]
    out = tail + packed
    return out / a.dtype.type(n) if mean else out


def _value(a, dims, mean):
    dims = sorted(d % a.ndim for d in dims) if a.ndim else []
    if not dims:
        return a.copy()
    count = int(np.prod([a.shape[d] for d in dims]))
    if len(dims) == a.ndim:
        out = _rows(np.ascontiguousarray(a).reshape(1, count))[0]
    else:
        out = _running(a, dims)
    out = np.asarray(out, a.dtype)
    if mean:
        out = (out / a.dtype.type(count)).astype(a.dtype)
    return out


def applies(x):
    return x.is_cpu and x.dtype in (torch.float32, torch.float64) and not x.is_sparse \
        and x.numel() > 0


_FN = []


def _function():
    if not _FN:
        class EigenSum(torch.autograd.Function):
            @staticmethod
            def forward(fctx, x, dims, keep, mean):
                a = x.detach().numpy()
                val = _value(a, dims, mean)
                fctx.shape, fctx.dims, fctx.keep = tuple(x.shape), dims, keep
                fctx.count = int(np.prod([x.shape[d] for d in dims])) if dims else 1
                fctx.mean = mean
                out = torch.from_numpy(np.ascontiguousarray(val))
                if keep:
                    out = out.reshape([1 if d in [e % x.dim() for e in dims] else s for d, s in enumerate(x.shape)])
                return out

            @staticmethod
            def backward(fctx, g):
                shape = [1 if d in [e % len(fctx.shape) for e in fctx.dims] else s for d, s in enumerate(fctx.shape)]
                g = g.reshape(shape).expand(fctx.shape)
                if fctx.mean:
                    g = g / fctx.count
                return g, None, None, None
        _FN.append(EigenSum)
    return _FN[0]


def reduce_sum(x, dims, keep=False, mean=False):
    """sum (or mean) of x over `dims` as Paddle 1.8's CPU kernel takes it; torch's sum where that does not apply."""
    dims = list(range(x.dim())) if dims is None else [d % x.dim() for d in dims] if x.dim() else []
    if not applies(x):
        fn = torch.mean if mean else torch.sum
        return fn(x, dim=dims, keepdim=keep) if dims else (x.clone() if x.dim() else x)
    if not dims:
        return _function().apply(x, tuple(dims), keep, mean)
    a = x.detach().numpy()
    whole = len(dims) == x.dim() and a.flags.c_contiguous
    val = _all(a, mean) if whole else _value(a, dims, mean)
    if not (x.requires_grad and torch.is_grad_enabled()):
        val = torch.from_numpy(np.ascontiguousarray(val))
        return val.reshape([1 if d in dims else s for d, s in enumerate(x.shape)]) if keep else val
    # torch's own sum/mean records the gradient (ones, or 1/n: the same as EigenSum.backward) in a C++ node,
    # which saves no output; its value is then overwritten with Paddle's. A Python autograd.Function for this
    # costs ~20 us more per call (a step's loss mean pays it every step).
    fn = torch.mean if mean else torch.sum
    if whole and not keep:
        out = fn(x)
        out.detach().fill_(float(val))      # (a float32 value survives the trip through a double exactly)
        return out
    out = fn(x, dim=dims, keepdim=keep)
    out.detach().copy_(torch.from_numpy(np.ascontiguousarray(val)).reshape(out.shape))
    return out
