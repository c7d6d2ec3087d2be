"""Sequence ops that move rows between the LoD form and other forms: sequence_reverse, sequence_pad,
sequence_unpad, sequence_expand_as, sequence_mask. Index arithmetic over all rows at once (no loop over sequences);
gradients by autograd through the gathers."""

from ....ir.lazy import torch, torch_dtype
from ...registry import OutMeta, defop
from ...shapes import first
from ....ir import dtype_name, convert_dtype


def _off(op, lod, slot, rows):
    if not lod:
        raise ValueError("%s: input %s=%s carries no LoD (feed a LoDTensor to a variable declared with "
                         "lod_level=1)" % (op.type, slot, op.input(slot)[0]))
    off = lod[-1]
    if int(off[-1]) != rows:
        raise ValueError("%s: the LoD of %s=%s covers %d rows but the tensor has %d"
                         % (op.type, slot, op.input(slot)[0], int(off[-1]), rows))
    return off


def _seg(lengths, total):
    return torch.repeat_interleave(torch.arange(lengths.numel(), device=lengths.device), lengths, output_size=total)


@defop("sequence_reverse", outputs=("Y",), lod_in=("X",), grad_lod=("X",),
       infer_shape=lambda ins, attrs: {"Y": OutMeta(first(ins, "X").shape, first(ins, "X").dtype,
                                                    first(ins, "X").lod_level)})
def sequence_reverse(op, ctx):
    def k(x, lod):
        off = _off(op, lod, "X", x.shape[0])
        seg = _seg(off[1:] - off[:-1], x.shape[0])
        rows = torch.arange(x.shape[0], device=x.device)
        # row r of sequence s (start a, end b) takes row a + b - 1 - r
        return x.index_select(0, off[:-1][seg] + off[1:][seg] - 1 - rows)
    return k


def _pad_shape(ins, attrs):
    x = first(ins, "X")
    n = attrs.get("padded_length", -1)
    return {"Out": OutMeta((-1, n) + tuple(x.shape[1:]), x.dtype), "Length": OutMeta((-1,), "int64")}


@defop("sequence_pad", inputs=("X", "PadValue"), outputs=("Out", "Length"), lod_in=("X",), grad_lod=("X",), infer_shape=_pad_shape,
       no_grad=("PadValue",))
def sequence_pad(op, ctx):
    want = op.attrs.get("padded_length", -1)

    def k(x, pad, lod):
        off = _off(op, lod, "X", x.shape[0])
        lengths = off[1:] - off[:-1]
        n = lengths.numel()
        longest = int(lengths.max()) if n else 0
        t = longest if want == -1 else want
        if t < longest:
            raise ValueError("sequence_pad: padded_length=%d is less than the longest sequence of X=%s (%d)"
                             % (want, op.input("X")[0], longest))
        tail = tuple(x.shape[1:])
        seg = _seg(lengths, x.shape[0])
        pos = seg * t + torch.arange(x.shape[0], device=x.device) - off[:-1][seg]
        padv = pad.detach().to(x.dtype)
        padv = padv.reshape(()) if padv.numel() == 1 else padv.reshape(tail)
        out = padv.expand((n * t,) + tail).contiguous().index_copy(0, pos, x)
        return out.reshape((n, t) + tail), lengths.to(torch.int64)
    return k


def _unpad_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta((-1,) + tuple(x.shape[2:]), x.dtype, 1)}


@defop("sequence_unpad", inputs=("X", "Length"), lod_out=("Out",), infer_shape=_unpad_shape, no_grad=("Length",),
       host="data")
def sequence_unpad(op, ctx):
    def k(x, length):
        lengths = length.reshape(-1).long()
        n, t = x.shape[0], x.shape[1]
        if lengths.numel() != n or (n and int(lengths.max()) > t):
            raise ValueError("sequence_unpad: Length=%s (%s) does not fit X=%s of shape %s"
                             % (op.input("Length")[0], lengths.tolist(), op.input("X")[0], list(x.shape)))
        off = torch.cat([lengths.new_zeros(1), torch.cumsum(lengths, 0)])
        total = int(off[-1])
        seg = _seg(lengths, total)
        pos = seg * t + torch.arange(total, device=x.device) - off[:-1][seg]
        out = x.reshape((n * t,) + tuple(x.shape[2:])).index_select(0, pos)
        return out, (off,)
    return k


def _expand_as_shape(ins, attrs):
    x, y = first(ins, "X"), first(ins, "Y")
    return {"Out": OutMeta((-1,) + tuple(x.shape[1:]), x.dtype, max(y.lod_level, 1))}


# Row i of X repeated as many times as sequence i of Y is long; the output takes Y's LoD.
@defop("sequence_expand_as", inputs=("X", "Y"), lod_in=("Y",), lod_out=("Out",), infer_shape=_expand_as_shape,
       no_grad=("Y",), host="data")
def sequence_expand_as(op, ctx):
    def k(x, y, lod):
        off = _off(op, lod, "Y", y.shape[0])
        lengths = off[1:] - off[:-1]
        if lengths.numel() != x.shape[0]:
            raise ValueError("sequence_expand_as: X=%s has %d rows but Y=%s has %d sequences (LoD %s)"
                             % (op.input("X")[0], x.shape[0], op.input("Y")[0], lengths.numel(), off.tolist()))
        return x.index_select(0, _seg(lengths, y.shape[0])), (off,)
    return k


def _mask_shape(ins, attrs):
    x = first(ins, "X")
    return {"Y": OutMeta(tuple(x.shape) + (attrs.get("maxlen", -1),), dtype_name(convert_dtype(attrs["out_dtype"])))}


# Y[..., j] = j < X[...]; the width is maxlen, or the largest length when maxlen is -1 (Paddle's default).
@defop("sequence_mask", inputs=("X", "MaxLenTensor"), outputs=("Y",), infer_shape=_mask_shape,
       differentiable=False, host="data",
       device_when=lambda op, program: op.attrs.get("maxlen", -1) >= 0 or bool(op.input("MaxLenTensor")))
def sequence_mask(op, ctx):
    dtype = torch_dtype(op.attrs["out_dtype"])
    maxlen = op.attrs.get("maxlen", -1)

    def k(x, maxlen_t):
        n = int(maxlen_t.reshape(-1)[0]) if maxlen_t is not None else maxlen
        if n < 0:
            n = int(x.max()) if x.numel() else 0
        return (torch.arange(n, device=x.device) < x.unsqueeze(-1)).to(dtype)
    return k
