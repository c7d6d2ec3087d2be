"""fluid.contrib.layers ops: partial_sum and partial_concat (columns [start_index, start_index + length) of
each 2-D input, summed or concatenated; length -1 means to the last column)."""

from ..lazy import torch
from ..registry import OutMeta, attr, defop


def _span(width, attrs, op_type):
    start, length = int(attrs.get("start_index", 0)), int(attrs.get("length", -1))
    if start < 0:
        start += width
    end = width if length < 0 else start + length
    if width >= 0 and not 0 <= start < end <= width:
        raise ValueError("%s: start_index=%s, length=%s do not fit inputs of %d columns"
                         % (op_type, attrs.get("start_index", 0), attrs.get("length", -1), width))
    return start, end


def _infer(op_type, concat):
    def infer(ins, attrs):
        xs = ins["X"]
        for x in xs:
            if len(x.shape) != 2 or tuple(x.shape) != tuple(xs[0].shape):
                raise ValueError("%s: inputs must be 2-D and of one shape, got %s"
                                 % (op_type, [list(v.shape) for v in xs]))
        start, end = _span(xs[0].shape[1], attrs, op_type)
        cols = (end - start) * (len(xs) if concat else 1)
        return {"Out": OutMeta((xs[0].shape[0], cols), xs[0].dtype)}
    return infer


@defop("partial_sum", inputs=("X*",), infer_shape=_infer("partial_sum", False))
def partial_sum(op, ctx):
    attrs = {"start_index": attr(op, "start_index", 0), "length": attr(op, "length", -1)}

    def k(xs):
        start, end = _span(xs[0].shape[1], attrs, "partial_sum")
        return torch.stack([x[:, start:end] for x in xs]).sum(0)
    return k


@defop("partial_concat", inputs=("X*",), infer_shape=_infer("partial_concat", True))
def partial_concat(op, ctx):
    attrs = {"start_index": attr(op, "start_index", 0), "length": attr(op, "length", -1)}

    def k(xs):
        start, end = _span(xs[0].shape[1], attrs, "partial_concat")
        return torch.cat([x[:, start:end] for x in xs], 1)
    return k
