"""Sorting, reversing, indexing and scattering ops of Paddle 1.8 (argsort, flip, roll, gather_nd, scatter,
unique, where_index, shard_index, multiplex, meshgrid, ...)."""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first, same_as
from ...ir import convert_dtype, dtype_name


def _argsort_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(x.shape, x.dtype), "Indices": OutMeta(x.shape, "int64")}


@defop("argsort", outputs=("Out", "Indices"), infer_shape=_argsort_shape, differentiable=False)
def argsort(op, ctx):
    axis, desc = attr(op, "axis", -1), attr(op, "descending", False)

    def k(x):
        out, idx = torch.sort(x, dim=axis, descending=desc, stable=True)
        return out, idx
    return k


@defop("reverse", infer_shape=same_as("X"))
def reverse(op, ctx):
    axes = list(attr(op, "axis", []))
    return lambda x: torch.flip(x, axes)


@defop("flip", infer_shape=same_as("X"))
def flip(op, ctx):
    dims = list(attr(op, "dims", []))
    return lambda x: torch.flip(x, dims)


@defop("roll", infer_shape=same_as("X"))
def roll(op, ctx):
    shifts, dims = list(attr(op, "shifts", [])), list(attr(op, "dims", []))
    return lambda x: torch.roll(x, shifts, dims)


def _index_select_shape(ins, attrs):
    x, idx = first(ins, "X"), first(ins, "Index")
    shape = list(x.shape)
    shape[attrs.get("dim", 0) % len(shape)] = idx.shape[0]
    return {"Out": OutMeta(shape, x.dtype)}


@defop("index_select", inputs=("X", "Index"), infer_shape=_index_select_shape, no_grad=("Index",))
def index_select(op, ctx):
    dim = attr(op, "dim", 0)
    return lambda x, idx: torch.index_select(x, dim, idx.reshape(-1).long())


def _index_sample_shape(ins, attrs):
    x, idx = first(ins, "X"), first(ins, "Index")
    return {"Out": OutMeta(idx.shape, x.dtype)}


@defop("index_sample", inputs=("X", "Index"), infer_shape=_index_sample_shape, no_grad=("Index",))
def index_sample(op, ctx):
    return lambda x, idx: torch.gather(x, 1, idx.long())


def _gather_nd_shape(ins, attrs):
    x, idx = first(ins, "X"), first(ins, "Index")
    k = idx.shape[-1]
    return {"Out": OutMeta(list(idx.shape[:-1]) + list(x.shape[k:]), x.dtype)}


def _nd_index(idx):
    idx = idx.long()
    return tuple(idx[..., i] for i in range(idx.shape[-1]))


@defop("gather_nd", inputs=("X", "Index"), infer_shape=_gather_nd_shape, no_grad=("Index",))
def gather_nd(op, ctx):
    return lambda x, idx: x[_nd_index(idx)]


@defop("scatter", inputs=("X", "Ids", "Updates"), infer_shape=same_as("X"), no_grad=("Ids",))
def scatter(op, ctx):
    overwrite = attr(op, "overwrite", True)

    def k(x, ids, upd):
        ids = ids.reshape(-1).long()
        xd = x.detach()
        if overwrite:
            out = xd.index_put((ids,), upd, accumulate=False)
        else:
            out = xd.index_put((ids,), torch.zeros_like(upd), accumulate=False).index_put((ids,), upd,
                                                                                         accumulate=True)
        # Paddle 1.8's scatter_grad passes Out@GRAD to X unchanged, also on the rows it overwrote: match it.
        return out + (x - xd)
    return k


@defop("scatter_nd_add", inputs=("X", "Index", "Updates"), infer_shape=same_as("X"), no_grad=("Index",))
def scatter_nd_add(op, ctx):
    return lambda x, idx, upd: x.index_put(_nd_index(idx), upd, accumulate=True)


@defop("where_index", inputs=("Condition",),
       infer_shape=lambda ins, attrs: {"Out": OutMeta((-1, len(first(ins, "Condition").shape)), "int64")},
       differentiable=False, host="data")
def where_index(op, ctx):
    return lambda c: torch.nonzero(c.bool())


def _unique(counts):
    def factory(op, ctx):
        idx_dt = getattr(torch, dtype_name(convert_dtype(attr(op, "dtype", "int32"))))

        def k(x):
            # Paddle 1.8 keeps unique values in order of first appearance.
            flat = x.reshape(-1)
            vals, inv, cnt = torch.unique(flat, sorted=True, return_inverse=True, return_counts=True)
            pos = torch.full((vals.numel(),), flat.numel(), dtype=torch.long, device=x.device)
            pos = pos.scatter_reduce(0, inv, torch.arange(flat.numel(), device=x.device), "amin")
            order = torch.argsort(pos)
            rank = torch.empty_like(order)
            rank[order] = torch.arange(order.numel(), device=x.device)
            out, index = vals[order], rank[inv].to(idx_dt)
            return (out, index, cnt[order].to(idx_dt)) if counts else (out, index)
        return k
    return factory


def _unique_shape(counts):
    def infer(ins, attrs):
        x = first(ins, "X")
        dt = convert_dtype(attrs.get("dtype", "int32"))
        out = {"Out": OutMeta((-1,), x.dtype), "Index": OutMeta(x.shape, dt)}
        if counts:
            out["Count"] = OutMeta((-1,), dt)
        return out
    return infer


defop("unique", outputs=("Out", "Index"), infer_shape=_unique_shape(False), differentiable=False,
      host="data")(_unique(False))
defop("unique_with_counts", outputs=("Out", "Index", "Count"), infer_shape=_unique_shape(True),
      differentiable=False, host="data")(_unique(True))


@defop("shard_index", infer_shape=same_as("X"), differentiable=False)
def shard_index(op, ctx):
    n, ns, sid, ign = attr(op, "index_num"), attr(op, "nshards"), attr(op, "shard_id"), attr(op, "ignore_value", -1)
    size = (n + ns - 1) // ns

    def k(x):
        return torch.where(x // size == sid, x % size, torch.full_like(x, ign))
    return k


def _multiplex_shape(ins, attrs):
    x = ins["X"][0]
    return {"Out": OutMeta(x.shape, x.dtype)}


@defop("multiplex", inputs=("X*", "Ids"), infer_shape=_multiplex_shape, no_grad=("Ids",))
def multiplex(op, ctx):
    def k(xs, ids):
        stacked = torch.stack(xs, 0)
        rows = torch.arange(stacked.shape[1], device=stacked.device)
        return stacked[ids.reshape(-1).long(), rows]
    return k


def _meshgrid_shape(ins, attrs):
    xs = ins["X"]
    shape = [x.shape[0] for x in xs]
    return {"Out": [OutMeta(shape, x.dtype) for x in xs]}


@defop("meshgrid", inputs=("X*",), outputs=("Out*",), infer_shape=_meshgrid_shape)
def meshgrid(op, ctx):
    return lambda xs: list(torch.meshgrid(*xs, indexing="ij"))


# ---- top_k, arg_max, arg_min -------------------------------------------------------------------------------

def _top_k_shape(ins, attrs):
    x = first(ins, "X")
    shape = tuple(x.shape[:-1]) + (int(attrs.get("k", 1)),)
    return {"Out": OutMeta(shape, x.dtype, x.lod_level), "Indices": OutMeta(shape, "int64", x.lod_level)}


# The k largest of the last dimension, largest first, and their positions.
@defop("top_k", outputs=("Out", "Indices"), infer_shape=_top_k_shape)
def top_k(op, ctx):
    k_ = int(attr(op, "k", 1))
    return lambda x: torch.topk(x, k_, dim=-1)


def _arg_shape(ins, attrs):
    x = first(ins, "X")
    nd = len(x.shape)
    axis = int(attrs.get("axis", 0))
    ax = axis + nd if axis < 0 else axis
    keep = bool(attrs.get("keepdims", False))
    shape = [1 if i == ax else d for i, d in enumerate(x.shape) if keep or i != ax] or [1]
    return {"Out": OutMeta(shape, "int32" if attrs.get("dtype") == 2 else "int64")}


def _arg(op, fn):
    axis = int(attr(op, "axis", 0))
    keep = bool(attr(op, "keepdims", False))
    dt = torch.int32 if attr(op, "dtype", -1) == 2 else torch.int64
    return lambda x: fn(x, axis, keepdim=keep).to(dt)


# Index of the largest / smallest along axis (int64, or int32 with dtype 2), the axis kept with keepdims.
@defop("arg_max", infer_shape=_arg_shape, differentiable=False)
def arg_max(op, ctx):
    return _arg(op, torch.argmax)


@defop("arg_min", infer_shape=_arg_shape, differentiable=False)
def arg_min(op, ctx):
    return _arg(op, torch.argmin)

