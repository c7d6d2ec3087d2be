"""Sequence (LoD) ops: sequence_pool, sequence_softmax, sequence_concat, sequence_expand.

A LoD arrives as a tuple of int64 offset tensors, one per level, on the data's device (see
fluid/core.py lod_as_tensors); these ops work on the last level. Every op is a few fused torch calls
over all sequences at once (segment_reduce, index_select, repeat_interleave), never a Python loop over
sequences, and autograd differentiates them (Paddle's *_grad kernels are not needed).
"""

from ....ir.lazy import torch
from ...registry import OutMeta, attr, defop
from ...shapes import first, same_as


def _offsets(lod, op, slot="X", rows=None):
    """The last LoD level; with `rows`, checked to cover exactly that many rows (segment_reduce runs
    unchecked, so a LoD that does not fit its tensor must be caught here)."""
    if not lod:
        raise ValueError("%s: input %s=%s carries no LoD (feed a LoDTensor with sequence lengths, e.g. "
                         "fluid.create_lod_tensor, to a variable declared with lod_level=1)"
                         % (op.type, slot, op.input(slot)[0] if op.input(slot) else "?"))
    off = lod[-1]
    if rows is not None and int(off[-1]) != rows:
        raise ValueError("%s: the LoD of %s=%s covers %d rows but the tensor has %d"
                         % (op.type, slot, op.input(slot)[0], int(off[-1]), rows))
    return off


def _lengths(off):
    return off[1:] - off[:-1]


def _segment_ids(lengths, total):
    """Row -> index of its sequence."""
    return torch.repeat_interleave(torch.arange(lengths.numel(), device=lengths.device), lengths,
                                   output_size=total)


def _same(y):
    return y


def _rows_view(x):
    """[T, ...] -> [T, F] (and a function restoring [N, ...] for N pooled rows); 2-D input is left alone
    so no view op lands in the autograd graph."""
    if x.dim() == 2:
        return x, _same
    tail = tuple(x.shape[1:])
    return x.reshape(x.shape[0], -1), (lambda y: y.reshape((y.shape[0],) + tail))


def _pad_empty(out, lengths, pad):
    empty = (lengths == 0).reshape(-1, *([1] * (out.dim() - 1)))
    return torch.where(empty, torch.full_like(out, pad), out)


# ---------------------------------------------------------------------------------------------------
def _pool_shape(ins, attrs):
    x = first(ins, "X")
    shape = (-1,) + tuple(x.shape[1:])
    return {"Out": OutMeta(shape, x.dtype, max(x.lod_level - 1, 0)), "MaxIndex": OutMeta(shape, "int32")}


# the builder keeps its outputs (MaxIndex is made stop-gradient); their shapes are these
@defop("sequence_pool", outputs=("Out", "MaxIndex"), lod_in=("X",), grad_lod=("X",), lod_out=("Out",), infer_shape=_pool_shape)
def sequence_pool(op, ctx):
    """Pool each sequence of the last LoD level to one row. Empty sequences give pad_value
    (MaxIndex -1), as Paddle 1.6+ does; the output keeps the LoD levels above the pooled one."""
    ptype = str(attr(op, "pooltype", "AVERAGE")).upper()
    pad = float(attr(op, "pad_value", 0.0))
    if ptype not in ("AVERAGE", "SUM", "SQRT", "MAX", "LAST", "FIRST"):
        raise ValueError("sequence_pool: pooltype must be one of average, sum, sqrt, max, last, first; got %r"
                         % ptype)

    def k(x, lod):
        off = _offsets(lod, op, rows=x.shape[0])
        out_lod = tuple(lod[:-1]) or None
        x2, restore = _rows_view(x)
        if ptype == "SUM" and pad == 0.0:   # the CTR hot path: one kernel (empty sequences sum to 0)
            return restore(torch.segment_reduce(x2, "sum", offsets=off, axis=0, unsafe=True)), None, out_lod
        lengths = _lengths(off)
        if ptype in ("SUM", "AVERAGE", "SQRT"):
            out = torch.segment_reduce(x2, "sum", offsets=off, axis=0, unsafe=True)
            if ptype != "SUM":
                n = lengths.clamp(min=1).to(x2.dtype).unsqueeze(1)
                # Paddle: average = sum / len, sqrt = sum / sqrt(len) (float32 sqrt of the length)
                out = out / (n if ptype == "AVERAGE" else torch.sqrt(n))
            return restore(_pad_empty(out, lengths, pad)), None, out_lod
        if ptype == "MAX":
            out, index = _max_pool(x2, off, lengths, pad)
            return restore(out), restore(index), out_lod
        n = lengths.numel()
        if x2.shape[0] == 0:
            return restore(x2.new_full((n, x2.shape[1]), pad)), None, out_lod
        idx = off[:-1] if ptype == "FIRST" else off[1:] - 1
        out = x2.index_select(0, idx.clamp(0, x2.shape[0] - 1))
        return restore(_pad_empty(out, lengths, pad)), None, out_lod
    return k


def _max_pool(x2, off, lengths, pad):
    """Max over each sequence and the row it came from (the first, on ties: Paddle's strict '>' scan).
    The sequences are gathered into a padded [N, L, F] block so one max() does them all."""
    n, width = lengths.numel(), x2.shape[1]
    if x2.shape[0] == 0 or n == 0:
        return x2.new_full((n, width), pad), torch.full((n, width), -1, dtype=torch.int32, device=x2.device)
    longest = int(lengths.max())
    steps = torch.arange(longest, device=x2.device)
    valid = steps.unsqueeze(0) < lengths.unsqueeze(1)                      # [N, L]
    rows = torch.where(valid, off[:-1].unsqueeze(1) + steps.unsqueeze(0), 0)
    block = x2[rows].masked_fill(~valid.unsqueeze(2), float("-inf"))     # [N, L, F]
    out, arg = block.max(dim=1)
    index = (off[:-1].unsqueeze(1) + arg).to(torch.int32)
    empty = (lengths == 0).unsqueeze(1)
    if bool(empty.any()):
        out = torch.where(empty, torch.full_like(out, pad), out)
        index = torch.where(empty, torch.full_like(index, -1), index)
    return out, index


# ---------------------------------------------------------------------------------------------------
@defop("sequence_softmax", lod_in=("X",), grad_lod=("X",), infer_shape=same_as("X"))
def sequence_softmax(op, ctx):
    """Softmax over the rows of each sequence (X is [T, 1] or [T]); the output keeps X's LoD."""
    def k(x, lod):
        off = _offsets(lod, op, rows=x.shape[0])
        if x.dim() > 2 or (x.dim() == 2 and x.shape[1] != 1):
            raise ValueError("sequence_softmax: X must be [T, 1] or [T], got %s" % list(x.shape))
        flat = x.reshape(-1)
        seg = _segment_ids(_lengths(off), flat.shape[0])
        # the shift only guards exp against overflow: no gradient needs to flow through it
        shift = torch.segment_reduce(flat.detach(), "max", offsets=off, unsafe=True)
        e = torch.exp(flat - shift.index_select(0, seg))
        total = torch.segment_reduce(e, "sum", offsets=off, unsafe=True)
        return (e / total.index_select(0, seg)).reshape(x.shape)
    return k


# ---------------------------------------------------------------------------------------------------
@defop("sequence_concat", inputs=("X*",), lod_in=("X*",), grad_lod=("X",), lod_out=("Out",),
       infer_shape=lambda ins, attrs: {"Out": OutMeta((-1,) + tuple(first(ins, "X").shape[1:]),
                                                      first(ins, "X").dtype, 1)})
def sequence_concat(op, ctx):
    """Sequence i of the output is sequence i of every input, one after another."""
    names = op.input("X")

    def k(xs, lods):
        offs = [_offsets(l, op, rows=x.shape[0]) for l, x in zip(lods, xs)]
        n = offs[0].numel() - 1
        for name, o in zip(names, offs):
            if o.numel() - 1 != n:
                raise ValueError("sequence_concat: every input needs the same number of sequences; %s has %d, "
                                 "%s has %d" % (names[0], n, name, o.numel() - 1))
        lens = [_lengths(o) for o in offs]
        out_len = torch.stack(lens).sum(0)
        out_off = torch.cat([out_len.new_zeros(1), torch.cumsum(out_len, 0)])
        before = out_off[:-1].clone()          # where input j's part of each output sequence starts
        dest = []
        for o, ln, x in zip(offs, lens, xs):
            seg = _segment_ids(ln, x.shape[0])
            within = torch.arange(x.shape[0], device=x.device) - o[:-1].index_select(0, seg)
            dest.append(before.index_select(0, seg) + within)
            before = before + ln
        dest = torch.cat(dest)
        src = torch.cat(xs, 0)
        out = src.new_empty(src.shape).index_copy(0, dest, src)
        return out, (out_off,)
    return k


# ---------------------------------------------------------------------------------------------------
@defop("sequence_expand", inputs=("X", "Y"), lod_in=("X", "Y"), grad_lod=("X",), lod_out=("Out",),
       infer_shape=lambda ins, attrs: {"Out": OutMeta((-1,) + tuple(first(ins, "X").shape[1:]),
                                                      first(ins, "X").dtype, first(ins, "X").lod_level)}, host="data")
def sequence_expand(op, ctx):
    """Repeat sequence i of X (row i when X has no LoD) as many times as Y's sequence i at ref_level has
    elements. Out has a LoD only when X has one (Paddle's sequence_expand)."""
    ref_level = int(attr(op, "ref_level", -1))

    def k(x, y, x_lod, y_lod):
        if not y_lod:
            raise ValueError("sequence_expand: Y=%s carries no LoD to expand by" % op.input("Y")[0])
        level = ref_level if ref_level >= 0 else len(y_lod) - 1
        if level >= len(y_lod):
            raise ValueError("sequence_expand: ref_level %d but Y has %d LoD levels" % (ref_level, len(y_lod)))
        ref = y_lod[level]
        if ref.numel() <= 1:
            return x, x_lod
        if x_lod and len(x_lod) > 1:
            raise ValueError("sequence_expand: X may have at most 1 LoD level, got %d" % len(x_lod))
        repeats = _lengths(ref)
        if x_lod:
            x_off = x_lod[0]
            if x_off.numel() != ref.numel():
                raise ValueError("sequence_expand: X has %d sequences but Y's level %d has %d"
                                 % (x_off.numel() - 1, level, ref.numel() - 1))
            x_len = _lengths(x_off)
        else:
            if x.shape[0] != ref.numel() - 1:
                raise ValueError("sequence_expand: X has %d rows (no LoD) but Y's level %d has %d sequences"
                                 % (x.shape[0], level, ref.numel() - 1))
            x_off = torch.arange(x.shape[0] + 1, device=x.device)
            x_len = torch.ones(x.shape[0], dtype=torch.int64, device=x.device)
        out_len = torch.repeat_interleave(x_len, repeats)          # one entry per output sequence
        src_start = torch.repeat_interleave(x_off[:-1], repeats)
        out_off = torch.cat([out_len.new_zeros(1), torch.cumsum(out_len, 0)])
        total = int(out_off[-1])
        seg = _segment_ids(out_len, total)
        rows = src_start.index_select(0, seg) + torch.arange(total, device=x.device) - out_off[:-1].index_select(0, seg)
        out = x.index_select(0, rows)
        return out, ((out_off,) if x_lod else None)
    return k
