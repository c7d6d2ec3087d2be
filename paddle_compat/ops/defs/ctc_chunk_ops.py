"""Sequence labelling ops of Paddle 1.8: chunk_eval (chunk precision/recall/F1 under the IOB, IOE, IOBES and
plain tag schemes), warpctc (CTC loss, through torch's ctc_loss) and ctc_align (the second half of
ctc_greedy_decoder). LoD input or the padded form with lengths; all sequences at once, no loop over them."""

from ...ir.lazy import torch, F
from ..registry import OutMeta, attr, defop
from ..shapes import first

# scheme -> (tags per chunk type, begin, inside, end, single); -1: the scheme has no such tag
_SCHEMES = {"IOB": (2, 0, 1, -1, -1), "IOE": (2, -1, 0, 1, -1), "IOBES": (4, 0, 1, 2, 3), "plain": (1, -1, -1, -1, -1)}


def _lengths_of(op, x, lod, length, slot):
    """(flat values [T], offsets [N + 1]) of LoD input, or of padded [N, L] input with lengths."""
    if length is not None:
        lens = length.reshape(-1).long()
        n, lmax = x.shape[0], x.shape[1] if x.dim() > 1 else 1
        if lens.numel() != n or (lens.numel() and int(lens.max()) > lmax):
            raise ValueError("%s: the lengths %s do not fit %s of shape %s"
                             % (op.type, lens.tolist(), op.input(slot)[0], list(x.shape)))
        mask = torch.arange(lmax, device=x.device).unsqueeze(0) < lens.unsqueeze(1)
        flat = x.reshape(n, lmax)[mask]
    else:
        if not lod:
            raise ValueError("%s: %s carries no LoD (feed a LoDTensor, or give the sequence lengths)"
                             % (op.type, op.input(slot)[0]))
        flat = x.reshape(-1)
        lens = lod[-1][1:] - lod[-1][:-1]
    off = torch.zeros(lens.numel() + 1, dtype=torch.long, device=x.device)
    off[1:] = torch.cumsum(lens, 0)
    return flat.long(), off


def _segments(lab, off, num_types, scheme):
    """Chunks of every sequence as [K] (begin, end, type), Paddle's GetSegments run on all rows at once.

    A chunk begins at i when Paddle's ChunkBegin(prev, cur) holds and ends at i - 1 when ChunkEnd(prev, cur)
    holds inside a chunk; inside a chunk means the previous tag is not 'other' (every ChunkEnd inside a chunk
    that keeps a chunk type also begins one, so the begin and end marks alternate within a sequence)."""
    ntt, t_begin, t_inside, t_end, t_single = _SCHEMES[scheme]
    other = num_types
    tag, typ = lab % ntt, lab // ntt
    n = lab.numel()
    first_row = torch.zeros(n, dtype=torch.bool, device=lab.device)
    first_row[off[:-1][off[:-1] < n]] = True
    last_row = torch.zeros(n, dtype=torch.bool, device=lab.device)
    last_row[(off[1:] - 1)[off[1:] > off[:-1]]] = True
    prev_tag = torch.where(first_row, torch.full_like(tag, -1), torch.roll(tag, 1))
    prev_type = torch.where(first_row, torch.full_like(typ, other), torch.roll(typ, 1))

    def is_(t, v):
        return (t == v) if v >= 0 else torch.zeros_like(t, dtype=torch.bool)

    same = typ == prev_type
    prev_other, cur_other = prev_type == other, typ == other
    end_same = ((is_(prev_tag, t_begin) | is_(prev_tag, t_inside)) & (is_(tag, t_begin) | is_(tag, t_single))) | \
        is_(prev_tag, t_end) | is_(prev_tag, t_single)
    ends_before = ~prev_other & (cur_other | ~same | end_same)          # a chunk ends at i - 1
    begin_same = is_(tag, t_begin) | is_(tag, t_single) | \
        ((is_(tag, t_inside) | is_(tag, t_end)) & (is_(prev_tag, t_end) | is_(prev_tag, t_single)))
    begins = torch.where(prev_other, ~cur_other, ~cur_other & (~same | begin_same))
    idx = torch.arange(n, device=lab.device)
    starts = idx[begins]
    ends = torch.sort(torch.cat([idx[ends_before] - 1, idx[last_row & ~cur_other]]))[0]
    return starts, ends, typ[starts]


def _chunk_shape(ins, attrs):
    f, i = OutMeta((1,), "float32"), OutMeta((1,), "int64")
    return {"Precision": f, "Recall": f, "F1-Score": f, "NumInferChunks": i, "NumLabelChunks": i,
            "NumCorrectChunks": i}


@defop("chunk_eval", inputs=("Inference", "Label", "SeqLength"),
       outputs=("Precision", "Recall", "F1-Score", "NumInferChunks", "NumLabelChunks", "NumCorrectChunks"),
       lod_in=("Inference", "Label"), infer_shape=_chunk_shape, differentiable=False, host="reads")
def chunk_eval(op, ctx):
    scheme, num_types = attr(op, "chunk_scheme", "IOB"), int(attr(op, "num_chunk_types"))
    if scheme not in _SCHEMES:
        raise ValueError("chunk_eval: chunk_scheme must be one of %s, got %r" % (sorted(_SCHEMES), scheme))
    excluded = [int(t) for t in (attr(op, "excluded_chunk_types", []) or [])]
    top = num_types * _SCHEMES[scheme][0]

    def k(inf, lab, seq_len, inf_lod, lab_lod):
        with torch.no_grad():
            a, off = _lengths_of(op, inf, inf_lod, seq_len, "Inference")
            b, off_b = _lengths_of(op, lab, lab_lod, seq_len, "Label")
            if a.numel() != b.numel() or not torch.equal(off, off_b):
                raise ValueError("chunk_eval: Inference=%s and Label=%s hold different sequences"
                                 % (op.input("Inference")[0], op.input("Label")[0]))
            for name, v in (("Inference", a), ("Label", b)):
                if v.numel() and (int(v.min()) < 0 or int(v.max()) > top):
                    raise ValueError("chunk_eval: %s=%s has a tag outside [0, %d] (num_chunk_types=%d, %s)"
                                     % (name, op.input(name)[0], top, num_types, scheme))
            segs = []
            for v in (a, b):
                s, e, t = _segments(v, off, num_types, scheme)
                keep = torch.ones_like(t, dtype=torch.bool)
                for x in excluded:
                    keep &= t != x
                segs.append((s[keep], e[keep], t[keep]))
            n = max(a.numel(), 1)
            key = [(s * n + e) * (num_types + 1) + t for s, e, t in segs]
            n_inf, n_lab = key[0].numel(), key[1].numel()
            n_ok = int(torch.isin(key[0], key[1]).sum())
            p = n_ok / n_inf if n_inf else 0.0
            r = n_ok / n_lab if n_lab else 0.0
            f1 = 2 * p * r / (p + r) if n_ok else 0.0
            f32 = lambda v: torch.tensor([v], dtype=torch.float32, device=inf.device)   # noqa: E731
            i64 = lambda v: torch.tensor([v], dtype=torch.int64, device=inf.device)     # noqa: E731
            return f32(p), f32(r), f32(f1), i64(n_inf), i64(n_lab), i64(n_ok)
    return k


def _ctc_shape(ins, attrs):
    x = first(ins, "Logits")
    return {"Loss": OutMeta((-1, 1), x.dtype), "WarpCTCGrad": OutMeta(x.shape, x.dtype)}


# Loss is the negative log-likelihood of each label sequence, from softmax(Logits) (softmax applied here, as
# warp-ctc does). norm_by_times, as in Paddle 1.8, leaves the loss alone and divides each sequence's gradient
# by its number of time steps. WarpCTCGrad is Paddle's gradient buffer, which nothing reads; it holds zeros.
@defop("warpctc", inputs=("Logits", "Label", "LogitsLength", "LabelLength"), outputs=("WarpCTCGrad", "Loss"),
       lod_in=("Logits", "Label"), infer_shape=_ctc_shape, no_grad=("Label", "LogitsLength", "LabelLength"),
       host="reads")
def warpctc(op, ctx):
    blank, norm = int(attr(op, "blank", 0)), bool(attr(op, "norm_by_times", False))

    def k(logits, label, logits_len, label_len, lod_x, lod_y):
        if logits_len is not None:
            if label_len is None:
                raise ValueError("warpctc: give both input_length and label_length, or neither")
            x_len, y_len = logits_len.reshape(-1).long(), label_len.reshape(-1).long()
            block = logits                                                     # [T_max, N, C]
            targets = label.reshape(label.shape[0], -1).long()
        else:
            if not lod_x or not lod_y:
                raise ValueError("warpctc: Logits=%s and Label=%s need LoD (or give input_length and "
                                 "label_length)" % (op.input("Logits")[0], op.input("Label")[0]))
            ox, oy = lod_x[-1], lod_y[-1]
            x_len, y_len = ox[1:] - ox[:-1], oy[1:] - oy[:-1]
            if x_len.numel() != y_len.numel():
                raise ValueError("warpctc: %d logit sequences but %d label sequences"
                                 % (x_len.numel(), y_len.numel()))
            t_max = int(x_len.max()) if x_len.numel() else 0
            steps = torch.arange(t_max, device=logits.device).unsqueeze(1)
            mask = steps < x_len.unsqueeze(0)
            idx = (ox[:-1].unsqueeze(0) + steps).masked_fill(~mask, 0)
            block = logits.index_select(0, idx.reshape(-1)).reshape(t_max, -1, logits.shape[1])
            targets = label.reshape(-1).long()
        c = block.shape[-1]
        if not 0 <= blank < c:
            raise ValueError("warpctc: blank=%d is outside the %d classes of Logits=%s"
                             % (blank, c, op.input("Logits")[0]))
        logp = torch.log_softmax(block, -1)
        loss = F.ctc_loss(logp, targets, x_len, y_len, blank=blank, reduction="none", zero_infinity=False)
        if norm:
            scaled = loss / x_len.to(loss.dtype)
            loss = scaled + (loss - scaled).detach()
        return torch.zeros_like(block).detach(), loss.unsqueeze(1)
    return k


def _align_shape(ins, attrs):
    x, length = first(ins, "Input"), first(ins, "InputLength")
    if length is not None:
        return {"Output": OutMeta(x.shape, x.dtype), "OutputLength": OutMeta((x.shape[0], 1), "int64")}
    return {"Output": OutMeta((-1, 1), x.dtype, x.lod_level)}


# Merges repeated tokens (merge_repeated) and drops blanks. LoD form: when every sequence comes out empty,
# Paddle's output is the single value -1 (with all-zero lengths); padded form: rows padded with padding_value.
@defop("ctc_align", inputs=("Input", "InputLength"), outputs=("Output", "OutputLength"), lod_in=("Input",),
       lod_out=("Output",), infer_shape=_align_shape, differentiable=False, host="data")
def ctc_align(op, ctx):
    blank, merge = int(attr(op, "blank", 0)), bool(attr(op, "merge_repeated", True))
    pad = int(attr(op, "padding_value", 0))

    def keep_mask(v, first_row):
        keep = v != blank
        if merge:
            keep &= first_row | (v != torch.roll(v, 1))
        return keep

    def k(x, length, lod):
        if length is not None:
            n, t = x.shape[0], x.shape[1]
            lens = length.reshape(-1).long()
            valid = torch.arange(t, device=x.device).unsqueeze(0) < lens.unsqueeze(1)
            first_col = torch.zeros_like(valid)
            first_col[:, 0] = True
            v = x.reshape(n, t)
            keep = (v != blank) & valid
            if merge:
                keep &= first_col | (v != torch.roll(v, 1, 1))
            pos = torch.cumsum(keep.long(), 1) - 1
            out = torch.full_like(v, pad)
            rows = torch.arange(n, device=x.device).unsqueeze(1).expand(n, t)
            out[rows[keep], pos[keep]] = v[keep]
            return out.reshape(x.shape), keep.sum(1, keepdim=True).long(), None
        if not lod:
            raise ValueError("ctc_align: Input=%s carries no LoD (feed a LoDTensor, or give input_length)"
                             % op.input("Input")[0])
        off = lod[-1]
        v = x.reshape(-1)
        first_row = torch.zeros_like(v, dtype=torch.bool)
        first_row[off[:-1][off[:-1] < v.numel()]] = True
        keep = keep_mask(v, first_row)
        csum = torch.zeros(v.numel() + 1, dtype=torch.long, device=x.device)
        csum[1:] = torch.cumsum(keep.long(), 0)
        new_off = csum.index_select(0, off)
        out = v[keep].reshape(-1, 1)
        if out.numel() == 0:
            out = torch.full((1, 1), -1, dtype=x.dtype, device=x.device)
        return out, None, tuple(lod[:-1]) + (new_off,)
    return k
