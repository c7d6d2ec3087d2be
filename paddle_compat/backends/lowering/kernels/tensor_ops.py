"""Shape and data-movement ops: cast, concat, split, reshape2, transpose2, top_k, arg_max, lookup_table..."""

import torch
import torch.nn.functional as F

from ...selected_rows import make_rows, merge_rows, rows_values
from ..registry import register
from .common import attr, torch_dtype


@register("cast")
def cast(op, ctx):
    dtype = torch_dtype(attr(op, "out_dtype"))
    return lambda x: x.to(dtype)


@register("concat", inputs=("X*",))
def concat(op, ctx):
    axis = attr(op, "axis", 0)
    return lambda xs: torch.cat(xs, axis)


@register("split", outputs=("Out*",))
def split(op, ctx):
    axis, num, sections = attr(op, "axis", 0), attr(op, "num", 0), list(attr(op, "sections", []))

    def k(x):
        if num:
            return list(torch.chunk(x, num, axis)) if x.shape[axis] % num == 0 else \
                list(torch.split(x, x.shape[axis] // num, axis))
        secs = list(sections)
        if -1 in secs:
            secs[secs.index(-1)] = x.shape[axis] - (sum(secs) + 1)
        return list(torch.split(x, secs, axis))
    return k


def _reshape_target(shape, x):
    out = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return out


@register(["reshape2", "reshape"], inputs=("X", "Shape"))
def reshape2(op, ctx):
    shape = list(attr(op, "shape"))
    has_zero = 0 in shape

    def k(x, actual=None):
        if actual is not None:
            return x.reshape([int(d) for d in actual.tolist()])
        return x.reshape(_reshape_target(shape, x) if has_zero else shape)
    return k


@register(["transpose2", "transpose"])
def transpose2(op, ctx):
    perm = list(attr(op, "axis"))
    return lambda x: x.permute(perm)


@register(["flatten2", "flatten"])
def flatten2(op, ctx):
    axis = attr(op, "axis", 1)
    return lambda x: x.reshape(int(torch.tensor(x.shape[:axis]).prod()) if axis else 1, -1)


@register(["squeeze2", "squeeze"])
def squeeze2(op, ctx):
    axes = list(attr(op, "axes", []))

    def k(x):
        if not axes:
            return x.squeeze()
        keep = [d for i, d in enumerate(x.shape) if not ((i in axes or i - x.dim() in axes) and d == 1)]
        return x.reshape(keep)
    return k


@register(["unsqueeze2", "unsqueeze"])
def unsqueeze2(op, ctx):
    axes = sorted(attr(op, "axes", []))

    def k(x):
        for a in axes:
            x = x.unsqueeze(a)
        return x
    return k


@register("stack", inputs=("X*",), outputs=("Y",))
def stack(op, ctx):
    axis = attr(op, "axis", 0)
    return lambda xs: torch.stack(xs, axis)


@register("gather", inputs=("X", "Index"))
def gather(op, ctx):
    return lambda x, idx: torch.index_select(x, 0, idx.reshape(-1).long())


@register("expand")
def expand(op, ctx):
    times = list(attr(op, "expand_times"))
    return lambda x: x.repeat(times)


def _lookup(op, squeeze_last):
    padding_idx = attr(op, "padding_idx", -1)
    sparse = bool(attr(op, "is_sparse", False))

    def k(ids, w):
        # lookup_table's ids end in a dim of 1 ([N, 1] -> [N, D]); squeezing the int ids (not the float
        # output) keeps a view op out of the autograd graph.  lookup_table_v2 keeps the ids' shape.
        flat = ids.view(ids.shape[:-1]) if squeeze_last and ids.dim() > 1 and ids.shape[-1] == 1 else ids
        if flat.dtype != torch.int64:
            flat = flat.long()
        out = F.embedding(flat, w, padding_idx=padding_idx if padding_idx >= 0 else None, sparse=sparse)
        if padding_idx >= 0:  # Paddle outputs zeros for padding ids (torch would return the row)
            out = out.masked_fill((flat == padding_idx).unsqueeze(-1), 0.0)
        return out
    return k


@register("lookup_table", inputs=("Ids", "W"))
def lookup_table(op, ctx):
    return _lookup(op, squeeze_last=True)


@register("lookup_table_v2", inputs=("Ids", "W"))
def lookup_table_v2(op, ctx):
    return _lookup(op, squeeze_last=False)


@register("accuracy", inputs=("Out", "Indices", "Label"), outputs=("Accuracy", "Correct", "Total"))
def accuracy(op, ctx):
    def k(out, indices, label):
        lab = label.reshape(-1, 1).to(indices.dtype)
        correct = (indices == lab).any(dim=1).sum()
        total = indices.shape[0]
        acc = (correct.to(torch.float32) / max(total, 1)).reshape(1)
        return acc, correct.reshape(1).to(torch.int64), torch.tensor([total], dtype=torch.int64)
    return k


@register("slice", inputs=("Input",))
def slice_(op, ctx):
    axes, starts, ends = list(attr(op, "axes")), list(attr(op, "starts")), list(attr(op, "ends"))

    decrease = list(attr(op, "decrease_axis", []) or [])

    def k(x):
        idx = [slice(None)] * x.dim()
        for a, s, e in zip(axes, starts, ends):
            idx[a] = slice(s, min(e, x.shape[a]) if e >= 0 else e)
        return _decrease(x[tuple(idx)], decrease)
    return k


def _decrease(x, axes):
    """Drop the dims an integer index selected (Paddle's decrease_axis); none left gives shape [1]."""
    if not axes:
        return x
    keep = [d for i, d in enumerate(x.shape) if i not in axes]
    return x.reshape(keep or [1])


@register("pad")
def pad(op, ctx):
    p, value = list(attr(op, "paddings")), float(attr(op, "pad_value", 0.0))
    # torch pads the last dim first: [before_last, after_last, before_prev, ...]
    tp = []
    for i in range(len(p) // 2 - 1, -1, -1):
        tp += [p[2 * i], p[2 * i + 1]]
    return lambda x: F.pad(x, tp, value=value)


@register("label_smooth", inputs=("X", "PriorDist"))
def label_smooth(op, ctx):
    eps = float(attr(op, "epsilon", 0.1))

    def k(x, prior):
        if prior is not None:
            return (1 - eps) * x + eps * prior.reshape(1, -1)
        return (1 - eps) * x + eps / x.shape[-1]
    return k


@register("merge_selected_rows")
def merge_selected_rows(op, ctx):
    def k(x):
        if not x.is_sparse:
            raise TypeError("merge_selected_rows: %s is not row-sparse (SelectedRows)" % op.input("X")[0])
        rows, values = merge_rows(x)
        return make_rows(rows, values, x.shape[0])
    return k


@register("get_tensor_from_selected_rows")
def get_tensor_from_selected_rows(op, ctx):
    def k(x):
        if not x.is_sparse:
            raise TypeError("get_tensor_from_selected_rows: %s is not row-sparse (SelectedRows)" % op.input("X")[0])
        return rows_values(x)[1]
    return k
