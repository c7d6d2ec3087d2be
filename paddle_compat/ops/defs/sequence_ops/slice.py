"""More sequence ops on one-level LoD input: sequence_slice, sequence_reshape, sequence_scatter,
sequence_enumerate, row_conv (lookahead convolution) and im2sequence (image patches as a sequence per image).
Each is index arithmetic over all rows at once (gathers, index_add, unfold), never a loop over sequences;
gradients by autograd through the gathers."""

from ....ir.lazy import torch
from ...registry import OutMeta, attr, defop
from ...shapes import first


def _lod_text(lod):
    return None if not lod else [o.tolist() for o in lod]


def one_level(op, lod, slot, rows):
    """The offsets of a one-level LoD that covers `rows` rows (Paddle's sequence ops take one level only)."""
    name = op.input(slot)[0]
    if not lod:
        raise ValueError("%s: input %s=%s carries no LoD (feed a LoDTensor to a variable declared with "
                         "lod_level=1)" % (op.type, slot, name))
    if len(lod) != 1:
        raise ValueError("%s: input %s=%s must have one LoD level, got %s" % (op.type, slot, name, _lod_text(lod)))
    off = lod[0]
    if int(off[-1]) != rows or int(off[0]) != 0:
        raise ValueError("%s: the LoD of %s=%s (%s) does not cover its %d rows"
                         % (op.type, slot, name, off.tolist(), rows))
    return off


def _seg(lengths, total):
    return torch.repeat_interleave(torch.arange(lengths.numel(), device=lengths.device), lengths, output_size=total)


# ---- sequence_slice -----------------------------------------------------------------------------------------

def _slice_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta((-1,) + tuple(x.shape[1:]), x.dtype, max(x.lod_level, 1))}


# Sequence i keeps its rows offset[i] .. offset[i] + length[i] - 1.
@defop("sequence_slice", inputs=("X", "Offset", "Length"), lod_in=("X",), lod_out=("Out",),
       infer_shape=_slice_shape, no_grad=("Offset", "Length"), host="data")
def sequence_slice(op, ctx):
    def k(x, offset, length, lod):
        off = one_level(op, lod, "X", x.shape[0])
        n = off.numel() - 1
        start, size = offset.reshape(-1).long(), length.reshape(-1).long()
        for slot, t in (("Offset", start), ("Length", size)):
            if t.numel() != n:
                raise ValueError("sequence_slice: %s=%s has %d values but X=%s has %d sequences (LoD %s)"
                                 % (slot, op.input(slot)[0], t.numel(), op.input("X")[0], n, off.tolist()))
        lens = off[1:] - off[:-1]
        bad = (start < 0) | (size < 0) | (start + size > lens)
        if bool(bad.any()):
            i = int(torch.nonzero(bad)[0])
            raise ValueError("sequence_slice: sequence %d of X=%s has %d rows; Offset=%s gives %d and Length=%s "
                             "gives %d" % (i, op.input("X")[0], int(lens[i]), op.input("Offset")[0], int(start[i]),
                                           op.input("Length")[0], int(size[i])))
        new_off = torch.cat([off.new_zeros(1), torch.cumsum(size, 0)])
        total = int(new_off[-1])
        seg = _seg(size, total)
        rows = off[:-1][seg] + start[seg] + torch.arange(total, device=x.device) - new_off[:-1][seg]
        return x.index_select(0, rows), (new_off,)

    return k


# ---- sequence_reshape ---------------------------------------------------------------------------------------

def _reshape_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta((-1, attrs["new_dim"]), x.dtype, max(x.lod_level, 1))}


# The data is unchanged; each sequence of L rows of width D becomes L * D / new_dim rows of width new_dim.
@defop("sequence_reshape", lod_in=("X",), grad_lod=("X",), lod_out=("Out",), infer_shape=_reshape_shape, host="data")
def sequence_reshape(op, ctx):
    new_dim = int(attr(op, "new_dim"))

    def k(x, lod):
        off = one_level(op, lod, "X", x.shape[0])
        width = x.numel() // x.shape[0] if x.shape[0] else int(x.shape[-1])
        sizes = (off[1:] - off[:-1]) * width
        if bool((sizes % new_dim != 0).any()):
            i = int(torch.nonzero(sizes % new_dim != 0)[0])
            raise ValueError("sequence_reshape: sequence %d of X=%s holds %d values (LoD %s, width %d), not a "
                             "multiple of new_dim=%d" % (i, op.input("X")[0], int(sizes[i]), off.tolist(), width,
                                                          new_dim))
        return x.reshape(-1, new_dim), (off * width // new_dim,)

    return k


# ---- sequence_scatter ---------------------------------------------------------------------------------------

# Out = X, then Out[i, Ids[j]] += Updates[j] for every j of sequence i of Ids (repeats add up).
@defop("sequence_scatter", inputs=("X", "Ids", "Updates"), lod_in=("Ids",),
       infer_shape=lambda ins, attrs: {"Out": OutMeta(first(ins, "X").shape, first(ins, "X").dtype)},
       no_grad=("Ids",), host="data")
def sequence_scatter(op, ctx):
    def k(x, ids, updates, lod):
        idx = ids.reshape(-1).long()
        off = one_level(op, lod, "Ids", idx.numel())
        n, width = x.shape[0], (x.numel() // x.shape[0] if x.shape[0] else 0)
        if off.numel() - 1 != n:
            raise ValueError("sequence_scatter: Ids=%s has %d sequences (LoD %s) but X=%s has %d rows"
                             % (op.input("Ids")[0], off.numel() - 1, off.tolist(), op.input("X")[0], n))
        if updates.numel() != idx.numel():
            raise ValueError("sequence_scatter: Updates=%s has %d values but Ids=%s has %d"
                             % (op.input("Updates")[0], updates.numel(), op.input("Ids")[0], idx.numel()))
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= width):
            raise IndexError("sequence_scatter: Ids=%s holds %d..%d but X=%s rows have %d columns"
                             % (op.input("Ids")[0], int(idx.min()), int(idx.max()), op.input("X")[0], width))
        seg = _seg(off[1:] - off[:-1], idx.numel())
        flat = x.reshape(-1).index_add(0, seg * width + idx, updates.reshape(-1).to(x.dtype))
        return flat.reshape(x.shape)

    return k


# ---- sequence_enumerate -------------------------------------------------------------------------------------

def _enum_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta((x.shape[0], attrs["win_size"]), x.dtype, x.lod_level)}


# Row t: the ids t .. t + win_size - 1 of its sequence, pad_value past the sequence's end.
@defop("sequence_enumerate", lod_in=("X",), infer_shape=_enum_shape, differentiable=False)
def sequence_enumerate(op, ctx):
    win, pad = int(attr(op, "win_size")), attr(op, "pad_value", 0)

    def k(x, lod):
        flat = x.reshape(-1)
        rows = flat.numel()
        if x.dim() > 1 and x.numel() != x.shape[0]:
            raise ValueError("sequence_enumerate: X=%s must be [T, 1], got %s" % (op.input("X")[0], list(x.shape)))
        off = one_level(op, lod, "X", rows)
        end = off[1:].index_select(0, _seg(off[1:] - off[:-1], rows))
        pos = torch.arange(rows, device=x.device).unsqueeze(1) + torch.arange(win, device=x.device)
        inside = pos < end.unsqueeze(1)
        vals = flat.index_select(0, pos.clamp(max=max(rows - 1, 0)).reshape(-1)).reshape(rows, win)
        return torch.where(inside, vals, torch.full_like(vals, pad))

    return k


# ---- row_conv -----------------------------------------------------------------------------------------------

def _row_conv_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(x.shape, x.dtype, x.lod_level)}


# Lookahead convolution: Out[t] = sum_k X[t + k] * Filter[k] (elementwise over the width) for the rows
# t + k still inside t's sequence. Without a LoD, X is [batch, time, width] (one sequence per batch row).
@defop("row_conv", inputs=("X", "Filter"), lod_in=("X",), infer_shape=_row_conv_shape)
def row_conv(op, ctx):
    def k(x, w, lod):
        ctx_len = w.shape[0]
        if w.shape[-1] != x.shape[-1]:
            raise ValueError("row_conv: Filter=%s is %s but X=%s has width %d"
                             % (op.input("Filter")[0], list(w.shape), op.input("X")[0], x.shape[-1]))
        if not lod:
            if x.dim() != 3:
                raise ValueError("row_conv: X=%s has no LoD, so it must be [batch, time, width]; got %s"
                                 % (op.input("X")[0], list(x.shape)))
            steps = x.shape[1]
            padded = torch.cat([x, x.new_zeros(x.shape[0], ctx_len - 1, x.shape[2])], 1)
            return sum(padded[:, j:j + steps] * w[j] for j in range(ctx_len))
        rows = x.shape[0]
        off = one_level(op, lod, "X", rows)
        end = off[1:].index_select(0, _seg(off[1:] - off[:-1], rows))
        pos = torch.arange(rows, device=x.device).unsqueeze(1) + torch.arange(ctx_len, device=x.device)
        inside = (pos < end.unsqueeze(1)).to(x.dtype)                                   # [T, K]
        win = x.index_select(0, pos.clamp(max=max(rows - 1, 0)).reshape(-1)).reshape(rows, ctx_len, -1)
        return ((win * inside.unsqueeze(-1)) * w.unsqueeze(0)).sum(1)

    return k


# ---- im2sequence --------------------------------------------------------------------------------------------

def _out_size(size, k, pad0, pad1, stride):
    return (size + pad0 + pad1 - k) // stride + 1


def _im2seq_shape(ins, attrs):
    x = first(ins, "X")
    kh, kw = attrs["kernels"]
    return {"Out": OutMeta((-1, x.shape[1] * kh * kw), x.dtype, 1)}


# Image n of X [N, C, H, W] becomes a sequence of oh * ow rows, one per kernel position (row-major), each
# the patch in (C, kh, kw) order; paddings are (up, left, down, right). With Y (real image sizes [N, 2], used
# by Paddle only when N > 1), image n keeps the top-left ceil(h_n / out_stride) x ceil(w_n / out_stride)
# image's worth of positions of the full grid (Paddle pads against the full image, not the real one).
@defop("im2sequence", inputs=("X", "Y"), lod_out=("Out",), infer_shape=_im2seq_shape, no_grad=("Y",))
def im2sequence(op, ctx):
    kh, kw = attr(op, "kernels")
    sh, sw = attr(op, "strides", [1, 1])
    up, left, down, right = attr(op, "paddings", [0, 0, 0, 0])
    osh, osw = attr(op, "out_stride", [1, 1])

    def k(x, y):
        if x.dim() != 4:
            raise ValueError("im2sequence: X=%s must be [N, C, H, W], got %s" % (op.input("X")[0], list(x.shape)))
        n, c, h, w = x.shape
        oh, ow = _out_size(h, kh, up, down, sh), _out_size(w, kw, left, right, sw)
        if oh <= 0 or ow <= 0:
            raise ValueError("im2sequence: X=%s is %dx%d, too small for kernels %s with paddings %s"
                             % (op.input("X")[0], h, w, [kh, kw], [up, left, down, right]))
        xp = torch.nn.functional.pad(x, (left, right, up, down))
        cols = torch.nn.functional.unfold(xp, (kh, kw), stride=(sh, sw)).transpose(1, 2)   # [N, oh*ow, C*kh*kw]
        if y is None or n == 1:
            off = torch.arange(n + 1, device=x.device, dtype=torch.int64) * (oh * ow)
            return cols.reshape(n * oh * ow, c * kh * kw), (off,)
        real = y.detach().reshape(n, 2).long()
        if real.shape[0] != n:
            raise ValueError("im2sequence: Y=%s must hold [N, 2] image sizes for the %d images of X=%s"
                             % (op.input("Y")[0], n, op.input("X")[0]))
        rh = (real[:, 0] + osh - 1) // osh
        rw = (real[:, 1] + osw - 1) // osw
        noh = ((rh + up + down - kh) // sh + 1).clamp(0, oh)
        now = ((rw + left + right - kw) // sw + 1).clamp(0, ow)
        keep = (torch.arange(oh, device=x.device).view(1, oh, 1) < noh.view(n, 1, 1)) & \
            (torch.arange(ow, device=x.device).view(1, 1, ow) < now.view(n, 1, 1))
        out = cols.reshape(n * oh * ow, c * kh * kw)[keep.reshape(-1)]
        off = torch.cat([noh.new_zeros(1), torch.cumsum(noh * now, 0)])
        return out, (off,)

    return k
