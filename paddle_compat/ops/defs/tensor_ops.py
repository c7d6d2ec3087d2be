"""Shape and data-movement ops: cast, concat, split, reshape2, transpose2, flatten2, squeeze2, unsqueeze2, stack,
gather, expand, accuracy, slice, pad and label_smooth. The SelectedRows accessors act on the
backend's row-sparse representation and stay with it (backends/lowering/kernels/rows_ops.py).

The reshaping ops' XShape output (Paddle keeps the input's shape there for its grad kernels) is recorded by the
builders but never computed: gradients come from autograd. No slot is declared no-grad here (ids, indices),
as before the move: programs stay as they were (the ids are int data, stop_gradient anyway).
"""

import math

from ...ir import convert_dtype, dtype_name
from ...ir.lazy import torch, F, torch_dtype
from ..registry import OutMeta, attr, defop
from ..shapes import first, same_as
from .gather_overwrite import gather_rows


def _known(dims):
    return all(d >= 0 for d in dims)


def _prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def _axis(axis, nd):
    # a negative axis counts from the end; one out of range stays so and fails where it is used
    return axis + nd if axis < 0 else axis


def _cast_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(x.shape, dtype_name(convert_dtype(attrs["out_dtype"])), x.lod_level)}


@defop("cast", infer_shape=_cast_shape, row_wise=True)
def cast(op, ctx):
    dtype = torch_dtype(attr(op, "out_dtype"))
    return lambda x: x.to(dtype)


def _concat_shape(ins, attrs):
    xs = ins["X"]
    shape = list(xs[0].shape)
    ax = _axis(attrs.get("axis", 0), len(shape))
    sizes = [v.shape[ax] for v in xs]
    shape[ax] = -1 if any(s < 0 for s in sizes) else sum(sizes)
    return {"Out": OutMeta(shape, xs[0].dtype, xs[0].lod_level)}


@defop("concat", inputs=("X*",), infer_shape=_concat_shape, grad_lod=("X",))
def concat(op, ctx):
    axis = attr(op, "axis", 0)
    return lambda xs: torch.cat(xs, axis)


def _split_shape(ins, attrs):
    x = first(ins, "X")
    ax = _axis(attrs.get("axis", 0), len(x.shape))
    num, size = attrs.get("num", 0), x.shape[ax]
    sizes = [size // num if size > 0 else -1] * num if num else list(attrs.get("sections", []))
    outs = []
    for s in sizes:
        shape = list(x.shape)
        shape[ax] = s
        outs.append(OutMeta(shape, x.dtype, x.lod_level))
    return {"Out": outs}


@defop("split", outputs=("Out*",), infer_shape=_split_shape)
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


def _reshape_shape(ins, attrs):
    # from the `shape` attribute even when a Shape tensor overrides it at run time (as Paddle does)
    x = first(ins, "X")
    out = _reshape_target(attrs["shape"], x)
    if -1 in out and _known(x.shape):
        known = _prod([d for d in out if d != -1])
        out[out.index(-1)] = _prod(x.shape) // known if known else -1
    return {"Out": OutMeta(out, x.dtype, x.lod_level)}


@defop(["reshape2", "reshape"], inputs=("X", "Shape"), infer_shape=_reshape_shape, host_inputs=("Shape",))
def reshape2(op, ctx):
    shape = list(attr(op, "shape"))
    has_zero = 0 in shape

    def k(x, actual=None):
        if actual is not None:
            return x.reshape([int(d) for d in actual.tolist()])
        return x.reshape(_reshape_target(shape, x) if has_zero else shape)
    return k


def _transpose_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta([x.shape[i] for i in attrs["axis"]], x.dtype)}


@defop(["transpose2", "transpose"], infer_shape=_transpose_shape)
def transpose2(op, ctx):
    perm = list(attr(op, "axis"))
    return lambda x: x.permute(perm)


def _flatten_shape(ins, attrs):
    x = first(ins, "X")
    axis = attrs.get("axis", 1)
    head, tail = x.shape[:axis], x.shape[axis:]
    return {"Out": OutMeta([_prod(head) if _known(head) else -1, _prod(tail) if _known(tail) else -1], x.dtype)}


@defop(["flatten2", "flatten"], infer_shape=_flatten_shape)
def flatten2(op, ctx):
    axis = attr(op, "axis", 1)
    return lambda x: x.reshape(math.prod(x.shape[:axis]) if axis else 1, -1)


def _squeeze_shape(ins, attrs):
    # as the builder records it: no axes keeps the shape (the kernel then squeezes every dim of 1)
    x = first(ins, "X")
    nd = len(x.shape)
    axes = [a + nd if a < 0 else a for a in attrs.get("axes", [])]
    return {"Out": OutMeta([d for i, d in enumerate(x.shape) if not (i in axes and d == 1)], x.dtype)}


@defop(["squeeze2", "squeeze"], infer_shape=_squeeze_shape)
def squeeze2(op, ctx):
    axes = list(attr(op, "axes", []))

    def k(x):
        if not axes:
            return x.squeeze()
        keep = [d for i, d in enumerate(x.shape) if not ((i in axes or i - x.dim() in axes) and d == 1)]
        return x.reshape(keep)
    return k


def _unsqueeze_shape(ins, attrs):
    x = first(ins, "X")
    shape = list(x.shape)
    for a in sorted(attrs.get("axes", [])):
        shape.insert(a if a >= 0 else len(shape) + a + 1, 1)
    return {"Out": OutMeta(shape, x.dtype)}


@defop(["unsqueeze2", "unsqueeze"], infer_shape=_unsqueeze_shape)
def unsqueeze2(op, ctx):
    axes = sorted(attr(op, "axes", []))

    def k(x):
        for a in axes:
            x = x.unsqueeze(a)
        return x
    return k


def _stack_shape(ins, attrs):
    xs = ins["X"]
    shape = list(xs[0].shape)
    axis = attrs.get("axis", 0)
    shape.insert(axis if axis >= 0 else len(shape) + axis + 1, len(xs))
    return {"Y": OutMeta(shape, xs[0].dtype)}


@defop("stack", inputs=("X*",), outputs=("Y",), infer_shape=_stack_shape)
def stack(op, ctx):
    axis = attr(op, "axis", 0)
    return lambda xs: torch.stack(xs, axis)


def _gather_shape(ins, attrs):
    x, idx = first(ins, "X"), first(ins, "Index")
    return {"Out": OutMeta([idx.shape[0]] + list(x.shape[1:]), x.dtype)}


@defop("gather", inputs=("X", "Index"), infer_shape=_gather_shape)
def gather(op, ctx):
    overwrite = attr(op, "overwrite", True)
    return lambda x, idx: gather_rows(x, idx.reshape(-1).long(), overwrite)


def _expand_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta([d * t if d >= 0 else -1 for d, t in zip(x.shape, attrs["expand_times"])], x.dtype)}


@defop("expand", infer_shape=_expand_shape, host_inputs=("ExpandTimes", "expand_times_tensor"))
def expand(op, ctx):
    times = list(attr(op, "expand_times"))
    return lambda x: x.repeat(times)


def _accuracy_shape(ins, attrs):
    return {"Accuracy": OutMeta((1,), "float32"), "Correct": OutMeta((1,), "int64"),
            "Total": OutMeta((1,), "int64")}


@defop("accuracy", inputs=("Out", "Indices", "Label"), outputs=("Accuracy", "Correct", "Total"),
       infer_shape=_accuracy_shape, differentiable=False)
def accuracy(op, ctx):
    def k(out, indices, label):
        lab = label.reshape(-1, 1).to(indices.dtype)
        correct = (indices == lab).any(dim=1).sum()
        total = indices.shape[0]
        acc = (correct.to(torch.float32) / max(total, 1)).reshape(1)
        # (torch.full, not torch.tensor([total]): a fill on the device, not an upload a CUDA graph cannot hold)
        return acc, correct.reshape(1).to(torch.int64), torch.full((1,), total, dtype=torch.int64,
                                                                   device=indices.device)
    return k


def _slice_shape(ins, attrs):
    x = first(ins, "Input")
    shape = list(x.shape)
    for a, s, e in zip(attrs["axes"], attrs["starts"], attrs["ends"]):
        if shape[a] >= 0:   # negative bounds count from the end, out-of-range ones clamp
            shape[a] = len(range(*slice(s, e).indices(shape[a])))
    dec = set(attrs.get("decrease_axis") or [])
    if dec:
        shape = [d for i, d in enumerate(shape) if i not in dec] or [1]
    return {"Out": OutMeta(shape, x.dtype, x.lod_level)}


@defop("slice", inputs=("Input",), infer_shape=_slice_shape)
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


def _pad_shape(ins, attrs):
    x, p = first(ins, "X"), attrs["paddings"]
    return {"Out": OutMeta([d + p[2 * i] + p[2 * i + 1] if d >= 0 else -1 for i, d in enumerate(x.shape)],
                           x.dtype)}


@defop("pad", infer_shape=_pad_shape)
def pad(op, ctx):
    p, value = list(attr(op, "paddings")), float(attr(op, "pad_value", 0.0))
    # torch pads the last dim first: [before_last, after_last, before_prev, ...]
    tp = []
    for i in range(len(p) // 2 - 1, -1, -1):
        tp += [p[2 * i], p[2 * i + 1]]
    return lambda x: F.pad(x, tp, value=value)


@defop("label_smooth", inputs=("X", "PriorDist"), infer_shape=same_as("X", keep_lod=False))
def label_smooth(op, ctx):
    eps = float(attr(op, "epsilon", 0.1))

    def k(x, prior):
        if prior is not None:
            return (1 - eps) * x + eps * prior.reshape(1, -1)
        return (1 - eps) * x + eps / x.shape[-1]
    return k
