"""Sequence ops beyond pooling: sequence_conv (context projection over each sequence, zero padding at the
sequence edges) and cos_sim. One gather over all rows at once, never a loop over sequences."""

from ....ir.lazy import torch
from ...registry import OutMeta, attr, defop
from ...shapes import first


def _seq_conv_shape(ins, attrs):
    x, f = first(ins, "X"), first(ins, "Filter")
    return {"Out": OutMeta((-1, f.shape[1]), x.dtype, x.lod_level)}


# Row t of a sequence sees rows t + contextStart ... t + contextStart + contextLength - 1 of the same sequence
# (zeros outside it), concatenated into one [contextLength * D] row, times Filter [contextLength * D, M].
# Trainable padding (PaddingData) is not supported: Paddle 1.8's sequence_conv layer never creates it.
@defop("sequence_conv", inputs=("X", "Filter"), lod_in=("X",), grad_lod=("X",), infer_shape=_seq_conv_shape)
def sequence_conv(op, ctx):
    start, length = attr(op, "contextStart", 0), attr(op, "contextLength", 3)
    stride = attr(op, "contextStride", 1)
    if stride != 1:
        raise ValueError("sequence_conv: contextStride must be 1 (as in Paddle), got %r" % stride)
    if attr(op, "paddingTrainable", False):
        raise NotImplementedError("sequence_conv: paddingTrainable=True is not supported")

    def k(x, w, lod):
        if not lod:
            raise ValueError("sequence_conv: input X=%s carries no LoD (feed a LoDTensor to a variable declared "
                             "with lod_level=1)" % op.input("X")[0])
        off = lod[-1]
        rows, d = x.shape[0], x.shape[1]
        if int(off[-1]) != rows:
            raise ValueError("sequence_conv: the LoD of X=%s covers %d rows but the tensor has %d"
                             % (op.input("X")[0], int(off[-1]), rows))
        if w.shape[0] != length * d:
            raise ValueError("sequence_conv: Filter=%s is %s but contextLength=%d and X width %d need [%d, M]"
                             % (op.input("Filter")[0], list(w.shape), length, d, length * d))
        lengths = off[1:] - off[:-1]
        seq = torch.repeat_interleave(torch.arange(lengths.numel(), device=x.device), lengths, output_size=rows)
        lo, hi = off[:-1].index_select(0, seq), off[1:].index_select(0, seq)
        pos = torch.arange(rows, device=x.device).unsqueeze(1) + start + \
            torch.arange(length, device=x.device).unsqueeze(0)                        # [T, L]
        ok = (pos >= lo.unsqueeze(1)) & (pos < hi.unsqueeze(1))
        ctx_rows = x.index_select(0, pos.clamp(0, max(rows - 1, 0)).reshape(-1)).reshape(rows, length, d)
        ctx_rows = ctx_rows * ok.unsqueeze(-1).to(x.dtype)
        return ctx_rows.reshape(rows, length * d) @ w

    return k


def _cos_sim_shape(ins, attrs):
    x = first(ins, "X")
    y = first(ins, "Y")
    # Out shares X's LoD (Paddle's ShareLoD), so sequence ops can follow a cos_sim of sequence rows
    return {"Out": OutMeta((x.shape[0], 1), x.dtype, x.lod_level), "XNorm": OutMeta((x.shape[0], 1), x.dtype),
            "YNorm": OutMeta((y.shape[0], 1), x.dtype)}


# Y may have one row, compared with every row of X (Paddle's broadcast case). XNorm/YNorm are side outputs;
# Paddle's cos_sim_grad reads no gradient of them, so they are detached.
@defop("cos_sim", inputs=("X", "Y"), outputs=("Out", "XNorm", "YNorm"), infer_shape=_cos_sim_shape)
def cos_sim(op, ctx):
    def k(x, y):
        x2, y2 = x.reshape(x.shape[0], -1), y.reshape(y.shape[0], -1)
        if x2.shape[1] != y2.shape[1] or y2.shape[0] not in (1, x2.shape[0]):
            raise ValueError("cos_sim: X=%s is %s and Y=%s is %s; Y needs X's width and 1 or %d rows"
                             % (op.input("X")[0], list(x.shape), op.input("Y")[0], list(y.shape), x2.shape[0]))
        xn = torch.sqrt((x2 * x2).sum(1, keepdim=True))
        yn = torch.sqrt((y2 * y2).sum(1, keepdim=True))
        out = (x2 * y2).sum(1, keepdim=True) / (xn * yn)
        return out, xn.detach(), yn.detach()

    return k
