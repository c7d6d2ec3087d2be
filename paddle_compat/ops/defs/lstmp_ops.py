"""lstmp (dynamic_lstmp): an LSTM whose recurrent state is a projection r = proj_act(h @ ProjWeight) of the
hidden state, in Paddle 1.8's layouts: Weight [P, 4H] (gate columns candidate, input, forget, output, as
lstm), ProjWeight [H, P], Bias [1, 4H] or [1, 7H] with peepholes; H0 is the initial projection [N, P].
cell_clip clips the cell state before it feeds the output gate, proj_clip the projection (Paddle's order).
All sequences run together over time-major steps (see rnn_ops); gradient flows from Projection only, as
Paddle's lstmp_grad reads no gradient of Cell."""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first
from .rnn_ops import _act, _offsets, _scatter_back, _time_major


def _lstmp_shape(ins, attrs):
    x, w, pw = first(ins, "Input"), first(ins, "Weight"), first(ins, "ProjWeight")
    h, p = pw.shape[0], pw.shape[1]
    lod = x.lod_level
    return {"Projection": OutMeta((-1, p), x.dtype, lod), "Cell": OutMeta((-1, h), x.dtype, lod),
            "BatchHidden": OutMeta((-1, h), x.dtype), "BatchGate": OutMeta((-1, 4 * h), x.dtype),
            "BatchCellPreAct": OutMeta((-1, h), x.dtype)}


@defop("lstmp", inputs=("Input", "H0", "C0", "Weight", "ProjWeight", "Bias"),
       outputs=("Projection", "Cell", "BatchHidden", "BatchGate", "BatchCellPreAct"), lod_in=("Input",),
       infer_shape=_lstmp_shape)
def lstmp(op, ctx):
    peep, reverse = attr(op, "use_peepholes", True), attr(op, "is_reverse", False)
    act_g = _act(op, "gate_activation", "sigmoid")
    act_cell = _act(op, "cell_activation", "tanh")
    act_cand = _act(op, "candidate_activation", "tanh")
    act_proj = _act(op, "proj_activation", "tanh")
    cell_clip, proj_clip = attr(op, "cell_clip", 0.0) or 0.0, attr(op, "proj_clip", 0.0) or 0.0

    def k(x, h0, c0, w, pw, b, lod):
        off = _offsets(op, lod, x.shape[0])
        hs, ps = pw.shape[0], pw.shape[1]
        if x.shape[1] != 4 * hs or tuple(w.shape) != (ps, 4 * hs):
            raise ValueError("lstmp: Input=%s is %s, Weight=%s is %s, ProjWeight=%s is %s; need [T, 4H], [P, 4H], "
                             "[H, P]" % (op.input("Input")[0], list(x.shape), op.input("Weight")[0], list(w.shape),
                                         op.input("ProjWeight")[0], list(pw.shape)))
        want = 7 * hs if peep else 4 * hs
        if b.numel() != want:
            raise ValueError("lstmp: Bias=%s has %d values; use_peepholes=%s needs [1, %d]"
                             % (op.input("Bias")[0], b.numel(), peep, want))
        b = b.reshape(-1)
        idx, mask, back = _time_major(off, reverse)
        n = idx.shape[1]
        xs = x.index_select(0, idx.reshape(-1)).reshape(idx.shape[0], n, 4 * hs) + b[:4 * hs]
        r = h0 if h0 is not None else x.new_zeros(n, ps)
        c = c0 if c0 is not None else x.new_zeros(n, hs)
        outs_r, outs_c, outs_h, outs_g = [], [], [], []
        for t in range(idx.shape[0]):
            g = xs[t] + r @ w
            gc, gi, gf, go = g[:, :hs], g[:, hs:2 * hs], g[:, 2 * hs:3 * hs], g[:, 3 * hs:]
            if peep:
                gi = gi + c * b[4 * hs:5 * hs]
                gf = gf + c * b[5 * hs:6 * hs]
            c_new = act_cand(gc) * act_g(gi) + c * act_g(gf)
            if cell_clip > 0:
                c_new = c_new.clamp(-cell_clip, cell_clip)
            if peep:
                go = go + c_new * b[6 * hs:]
            h_new = act_g(go) * act_cell(c_new)
            r_new = act_proj(h_new @ pw)
            if proj_clip > 0:
                r_new = r_new.clamp(-proj_clip, proj_clip)
            m = mask[t]
            r, c = torch.where(m, r_new, r), torch.where(m, c_new, c)
            outs_r.append(r_new)
            outs_c.append(c_new)
            outs_h.append(h_new)
            outs_g.append(g)
        if not outs_r:
            e = x.new_zeros(0, hs)
            return x.new_zeros(0, ps), e, e, x.new_zeros(0, 4 * hs), e
        cell = _scatter_back(outs_c, back).detach()
        return (_scatter_back(outs_r, back), cell, _scatter_back(outs_h, back).detach(),
                _scatter_back(outs_g, back).detach(), cell)

    return k
