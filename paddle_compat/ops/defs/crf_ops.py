"""Linear-chain CRF in Paddle 1.8's layout: linear_chain_crf (negative log-likelihood per sequence) and
crf_decoding (Viterbi path). Transition is [D + 2, D]: row 0 the start weights, row 1 the end weights, rows 2..
the tag-to-tag weights. Sequences come as LoD rows [T, D], or padded [N, L, D] with a Length input [N] (then
the labels are [N, L] and the path is [N, L], 0 past each length). All sequences run together, one loop over
time steps."""

from ...ir.lazy import torch
from ..registry import OutMeta, defop
from ..shapes import first


def _packed(op, x, length):
    """Padded Emission [N, L, D] and Length [N] -> (rows [sum(len), D], their LoD, their row in [N * L])."""
    if x.dim() != 3:
        raise ValueError("%s: with a Length input, Emission=%s must be padded [N, L, D], got %s"
                         % (op.type, op.input("Emission")[0], list(x.shape)))
    n, width = x.shape[0], x.shape[1]
    lens = length.reshape(-1).long().to(x.device)
    if lens.numel() != n or bool((lens < 0).any()) or bool((lens > width).any()):
        raise ValueError("%s: Length=%s must hold %d lengths in [0, %d], got %s"
                         % (op.type, op.input("Length")[0], n, width, lens.tolist()))
    mask = torch.arange(width, device=x.device).unsqueeze(0) < lens.unsqueeze(1)
    rows = torch.arange(n * width, device=x.device)[mask.reshape(-1)]
    off = torch.cat([lens.new_zeros(1), torch.cumsum(lens, 0)])
    return x.reshape(n * width, -1).index_select(0, rows), (off,), rows


def _plan(op, x, lod):
    """([T_max, N] row index, [T_max, N] mask, lengths) of the LoD sequences of Emission."""
    if not lod:
        raise ValueError("%s: Emission=%s carries no LoD (feed a LoDTensor, or give the Length input)"
                         % (op.type, op.input("Emission")[0]))
    off = lod[-1]
    if int(off[-1]) != x.shape[0]:
        raise ValueError("%s: the LoD of Emission=%s covers %d rows but the tensor has %d"
                         % (op.type, op.input("Emission")[0], int(off[-1]), x.shape[0]))
    lengths = off[1:] - off[:-1]
    t_max = int(lengths.max()) if lengths.numel() else 0
    steps = torch.arange(t_max, device=x.device).unsqueeze(1)
    mask = steps < lengths.unsqueeze(0)
    idx = (off[:-1].unsqueeze(0) + steps).masked_fill(~mask, 0)
    return idx, mask, lengths


def _check_trans(op, x, w):
    d = x.shape[-1]
    if tuple(w.shape) != (d + 2, d):
        raise ValueError("%s: Transition=%s is %s but Emission=%s has %d tags: need [%d, %d]"
                         % (op.type, op.input("Transition")[0], list(w.shape), op.input("Emission")[0], d, d + 2, d))


def _crf_shape(ins, attrs):
    x, w = first(ins, "Emission"), first(ins, "Transition")
    n = x.shape[0] if "Length" in ins else -1
    return {"Alpha": OutMeta(x.shape, x.dtype), "EmissionExps": OutMeta(x.shape, x.dtype),
            "TransitionExps": OutMeta(w.shape, x.dtype), "LogLikelihood": OutMeta((n, 1), x.dtype)}


# LogLikelihood is, as in Paddle, the NEGATIVE log-likelihood of each sequence's labels (a cost to minimise).
# Alpha holds the per-row normalised forward variables, like Paddle's; Alpha/EmissionExps/TransitionExps are
# side outputs whose gradient Paddle's linear_chain_crf_grad never reads, so they are detached.
@defop("linear_chain_crf", inputs=("Emission", "Transition", "Label", "Length"),
       outputs=("Alpha", "EmissionExps", "TransitionExps", "LogLikelihood"), lod_in=("Emission",),
       infer_shape=_crf_shape, no_grad=("Label", "Length"))
def linear_chain_crf(op, ctx):
    def k(x, w, label, length, lod):
        _check_trans(op, x, w)
        padded = x
        if length is not None:
            x, lod, rows = _packed(op, padded, length)
            label = label.reshape(-1).index_select(0, rows.to(label.device))
        idx, mask, lengths = _plan(op, x, lod)
        n = idx.shape[1]
        em = x.index_select(0, idx.reshape(-1)).reshape(idx.shape[0], n, -1)          # [T_max, N, D]
        lab = label.reshape(-1).long().index_select(0, idx.reshape(-1)).reshape(idx.shape)
        start, end, trans = w[0], w[1], w[2:]
        ar = torch.arange(n, device=x.device)
        log_alpha = start + em[0]
        alphas = [log_alpha]
        gold = start[lab[0]] + em[0, ar, lab[0]]
        for t in range(1, idx.shape[0]):
            nxt = torch.logsumexp(log_alpha.unsqueeze(2) + trans.unsqueeze(0), 1) + em[t]
            m = mask[t]
            log_alpha = torch.where(m.unsqueeze(1), nxt, log_alpha)
            alphas.append(nxt)
            step = trans[lab[t - 1], lab[t]] + em[t, ar, lab[t]]
            gold = gold + torch.where(m, step, torch.zeros_like(step))
        last = lab.gather(0, (lengths - 1).clamp(min=0).unsqueeze(0)).reshape(-1)
        gold = gold + end[last]
        log_z = torch.logsumexp(log_alpha + end, 1)
        nll = torch.where(lengths > 0, log_z - gold, torch.zeros_like(gold)).unsqueeze(1)
        back = _back_index(idx, mask)
        alpha = torch.softmax(torch.stack(alphas, 0), -1).reshape(-1, x.shape[1]).index_select(0, back).detach()
        em_exps = torch.exp(padded - padded.max(-1, keepdim=True)[0]).detach()
        if length is not None:
            alpha = alpha.new_zeros(padded.shape[0] * padded.shape[1], x.shape[1]).index_copy(0, rows, alpha)
            alpha = alpha.reshape(padded.shape)
        return alpha, em_exps, torch.exp(w).detach(), nll

    return k


def _back_index(idx, mask):
    """LoD row -> its position in the flattened [T_max * N] step block."""
    pos = torch.arange(idx.numel(), device=idx.device).reshape(idx.shape)
    back = torch.empty(int(mask.sum()), dtype=torch.long, device=idx.device)
    back[idx[mask]] = pos[mask]
    return back


def _decode_shape(ins, attrs):
    x = first(ins, "Emission")
    if "Length" in ins:
        return {"ViterbiPath": OutMeta(tuple(x.shape[:2]), "int64")}
    return {"ViterbiPath": OutMeta((-1, 1), "int64", x.lod_level)}


# With Label given, Paddle outputs 1 where the best path agrees with the label and 0 elsewhere.
@defop("crf_decoding", inputs=("Emission", "Transition", "Label", "Length"), outputs=("ViterbiPath",),
       lod_in=("Emission",), infer_shape=_decode_shape, differentiable=False)
def crf_decoding(op, ctx):
    def k(x, w, label, length, lod):
        _check_trans(op, x, w)
        padded = x
        if length is not None:
            x, lod, rows = _packed(op, padded, length)
        with torch.no_grad():
            idx, mask, lengths = _plan(op, x, lod)
            n = idx.shape[1]
            em = x.index_select(0, idx.reshape(-1)).reshape(idx.shape[0], n, -1)
            start, end, trans = w[0], w[1], w[2:]
            score = start + em[0]
            ptrs = []
            for t in range(1, idx.shape[0]):
                cand = score.unsqueeze(2) + trans.unsqueeze(0)                        # [N, from, to]
                best, arg = cand.max(1)
                m = mask[t].unsqueeze(1)
                score = torch.where(m, best + em[t], score)
                ptrs.append(torch.where(m, arg, torch.arange(x.shape[1], device=x.device).expand_as(arg)))
            tag = (score + end).argmax(1)
            path = [tag]
            for p in reversed(ptrs):          # finished sequences point to themselves past their end
                tag = p.gather(1, tag.unsqueeze(1)).squeeze(1)
                path.append(tag)
            path = torch.stack(path[::-1], 0)                                          # [T_max, N]
            out = path.reshape(-1).index_select(0, _back_index(idx, mask)).unsqueeze(1)
            if length is not None:
                if label is not None:       # 1 where the path agrees with the label, 0 past each length
                    lab = label.reshape(-1).long().to(out.device).index_select(0, rows)
                    out = (out.reshape(-1) == lab).long().unsqueeze(1)
                flat = out.new_zeros(padded.shape[0] * padded.shape[1]).index_copy(0, rows, out.reshape(-1))
                return flat.reshape(padded.shape[0], padded.shape[1])
            if label is not None:
                out = (out == label.reshape(-1, 1).long()).long()
            return out

    return k
