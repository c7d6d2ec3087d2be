"""Recurrent ops on LoD input, in Paddle 1.8's layouts: lstm (dynamic_lstm), gru (dynamic_gru), gru_unit.

All sequences of a batch run together: the rows of the LoD tensor are gathered into a time-major
[T_max, N, G*H] block (reversed per sequence for is_reverse), one loop runs over time steps for the whole
batch, finished sequences keep their state through a mask, and the per-step outputs are gathered back to the
LoD rows. Autograd differentiates it (Paddle's *_grad kernels are not needed), except lstm with Paddle's
default activations: lstm_seq.py runs that recurrence as one node with a hand-written backward (speed).

Weight layouts match Paddle so saved Paddle parameters load unchanged:
  lstm: Weight [H, 4H], gate columns in the order candidate, input, forget, output; Bias [1, 4H] or, with
        use_peepholes, [1, 7H] = the four gate biases then the peephole weights W_ic, W_fc, W_oc.
  gru:  Weight [H, 3H] read as flat memory: the first 2*H*H values are the [H, 2H] update/reset block, the
        last H*H the [H, H] candidate block (Paddle's GRU kernels index it so, not by column slices).
        Gate columns of Input/Bias: update, reset, candidate.

Gradient flows back from Hidden only, as in Paddle 1.8, whose lstm_grad/gru_grad/gru_unit_grad read no
gradient of Cell, Gate, ResetHiddenPrev or the Batch* buffers: those outputs are detached here, so a loss on
them trains the same weights as in Paddle.
"""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first
from .activation_ops import activation
from .lstm_seq import lstm_packed, packed_plan

_ACTS = ("sigmoid", "tanh", "relu", "identity", "linear")   # the activations Paddle's recurrent ops take
# gru_unit's integer activation attributes (its builder writes these ids)
GRU_UNIT_ACT_IDS = {"identity": 0, "sigmoid": 1, "tanh": 2, "relu": 3}
_ACT_IDS = {i: name for name, i in GRU_UNIT_ACT_IDS.items()}


def _act_name(op, name, default):
    v = attr(op, name, default)
    return _ACT_IDS.get(v, v) if isinstance(v, int) else v


def _act(op, name, default):
    v = attr(op, name, default)
    if isinstance(v, int):
        v = _ACT_IDS.get(v, v)
    if v not in _ACTS:
        raise ValueError("%s: attribute %s=%r is not one of %s" % (op.type, name, v, sorted(_ACTS)))
    return activation(v)


def _offsets(op, lod, rows):
    if not lod:
        raise ValueError("%s: input Input=%s carries no LoD (feed a LoDTensor with sequence lengths to a "
                         "variable declared with lod_level=1)" % (op.type, op.input("Input")[0]))
    off = lod[-1]
    if int(off[-1]) != rows:
        raise ValueError("%s: the LoD of Input=%s covers %d rows but the tensor has %d"
                         % (op.type, op.input("Input")[0], int(off[-1]), rows))
    return off


def _time_major(off, reverse):
    """Index plan for running all sequences at once.

    Returns (idx [T_max, N] row of each (step, sequence), clamped where the sequence is over; mask
    [T_max, N, 1] True where the step exists; back [T] position in the flattened [T_max*N] step block of
    each LoD row)."""
    lengths = off[1:] - off[:-1]
    n = lengths.numel()
    t_max = int(lengths.max()) if n else 0
    steps = torch.arange(t_max, device=off.device).unsqueeze(1)                    # [T_max, 1]
    mask = steps < lengths.unsqueeze(0)                                            # [T_max, N]
    if reverse:
        rel = lengths.unsqueeze(0) - 1 - steps
    else:
        rel = steps.expand(t_max, n)
    idx = (off[:-1].unsqueeze(0) + rel.clamp(min=0)).masked_fill(~mask, 0)
    flat_pos = (steps * n + torch.arange(n, device=off.device).unsqueeze(0))       # [T_max, N]
    back = torch.empty(int(off[-1]), dtype=torch.long, device=off.device)
    back[idx[mask]] = flat_pos[mask]
    return idx, mask.unsqueeze(-1), back


def _scatter_back(steps, back):
    """[T_max] list of [N, H] -> [T, H] in LoD row order."""
    block = torch.stack(steps, 0)
    return block.reshape(-1, block.shape[-1]).index_select(0, back)


# ---------------------------------------------------------------------------------------------------
def _lstm_shape(ins, attrs):
    x, w = first(ins, "Input"), first(ins, "Weight")
    h = w.shape[0]
    lod = x.lod_level
    return {"Hidden": OutMeta((-1, h), x.dtype, lod), "Cell": OutMeta((-1, h), x.dtype, lod),
            "BatchGate": OutMeta((-1, 4 * h), x.dtype), "BatchCellPreAct": OutMeta((-1, h), x.dtype)}


# BatchGate/BatchCellPreAct are Paddle's internal buffers in its own batch order; nothing reads them, so here
# they hold the gate pre-activations and cell states in LoD row order.
@defop("lstm", inputs=("Input", "H0", "C0", "Weight", "Bias"),
       outputs=("Hidden", "Cell", "BatchGate", "BatchCellPreAct"), lod_in=("Input",), infer_shape=_lstm_shape)
def lstm(op, ctx):
    peep, reverse = attr(op, "use_peepholes", True), attr(op, "is_reverse", False)
    act_g = _act(op, "gate_activation", "sigmoid")
    act_cell = _act(op, "cell_activation", "tanh")
    act_cand = _act(op, "candidate_activation", "tanh")
    # Paddle's default activations run as one autograd node with a hand-written backward (lstm_seq.py)
    fused = all(_act_name(op, n, d) == v for n, d, v in (("gate_activation", "sigmoid", "sigmoid"),
                                                          ("cell_activation", "tanh", "tanh"),
                                                          ("candidate_activation", "tanh", "tanh")))

    def _lstm_fused(x, h0, c0, w, b, off, hs):
        perm, sizes, rows, back = packed_plan(off, reverse)
        n = perm.numel()
        if not sizes:
            e = x.new_zeros(0, hs)
            return e, e, x.new_zeros(0, 4 * hs), e
        xp = x.index_select(0, rows) + b[:4 * hs]
        h0s = h0.index_select(0, perm) if h0 is not None else x.new_zeros(n, hs)
        c0s = c0.index_select(0, perm) if c0 is not None else x.new_zeros(n, hs)
        hid, cell = lstm_packed(xp, w, b[4 * hs:] if peep else None, h0s, c0s, sizes)
        cell = cell.index_select(0, back).detach()
        # BatchGate, an unread buffer, holds the input part of the gates in packed order here
        return hid.index_select(0, back), cell, xp.detach(), cell

    def k(x, h0, c0, w, b, lod):
        off = _offsets(op, lod, x.shape[0])
        hs = w.shape[0]
        if x.shape[1] != 4 * hs or w.shape[1] != 4 * hs:
            raise ValueError("lstm: Input=%s is %s and Weight=%s is %s; need [T, 4H] and [H, 4H]"
                             % (op.input("Input")[0], list(x.shape), op.input("Weight")[0], list(w.shape)))
        want = 7 * hs if peep else 4 * hs
        if b.numel() != want:
            raise ValueError("lstm: Bias=%s has %d values; use_peepholes=%s needs [1, %d]"
                             % (op.input("Bias")[0], b.numel(), peep, want))
        b = b.reshape(-1)
        if fused:
            return _lstm_fused(x, h0, c0, w, b, off, hs)
        idx, mask, back = _time_major(off, reverse)
        n = idx.shape[1]
        xs = x.index_select(0, idx.reshape(-1)).reshape(idx.shape[0], n, 4 * hs) + b[:4 * hs]
        h = h0 if h0 is not None else x.new_zeros(n, hs)
        c = c0 if c0 is not None else x.new_zeros(n, hs)
        outs_h, outs_c, outs_g = [], [], []
        for t in range(idx.shape[0]):
            g = xs[t] + h @ w
            gc, gi, gf, go = g[:, :hs], g[:, hs:2 * hs], g[:, 2 * hs:3 * hs], g[:, 3 * hs:]
            if peep:
                gi = gi + c * b[4 * hs:5 * hs]
                gf = gf + c * b[5 * hs:6 * hs]
            c_new = act_cand(gc) * act_g(gi) + c * act_g(gf)
            if peep:
                go = go + c_new * b[6 * hs:]
            h_new = act_g(go) * act_cell(c_new)
            m = mask[t]
            h, c = torch.where(m, h_new, h), torch.where(m, c_new, c)
            outs_h.append(h_new)
            outs_c.append(c_new)
            outs_g.append(g)
        if not outs_h:
            e = x.new_zeros(0, hs)
            return e, e, x.new_zeros(0, 4 * hs), e
        cell = _scatter_back(outs_c, back).detach()
        return _scatter_back(outs_h, back), cell, _scatter_back(outs_g, back).detach(), cell

    return k


# ---------------------------------------------------------------------------------------------------
def _gru_weights(w, hs):
    flat = w.reshape(-1)
    return flat[:2 * hs * hs].reshape(hs, 2 * hs), flat[2 * hs * hs:].reshape(hs, hs)


def _gru_step(xg, h, wg, wc, hs, act_g, act_c, origin):
    """One GRU step on pre-projected gates xg [N, 3H] (bias added). Returns (h_new, gate, r*h)."""
    uh = xg[:, :2 * hs] + h @ wg
    u, r = act_g(uh[:, :hs]), act_g(uh[:, hs:])
    rh = r * h
    cand = act_c(xg[:, 2 * hs:] + rh @ wc)
    h_new = u * h + (1 - u) * cand if origin else (1 - u) * h + u * cand
    return h_new, torch.cat([u, r, cand], 1), rh


def _gru_shape(ins, attrs):
    x, w = first(ins, "Input"), first(ins, "Weight")
    h = w.shape[0]
    return {"Hidden": OutMeta((-1, h), x.dtype, x.lod_level), "BatchGate": OutMeta((-1, 3 * h), x.dtype),
            "BatchResetHiddenPrev": OutMeta((-1, h), x.dtype), "BatchHidden": OutMeta((-1, h), x.dtype)}


# As with lstm, the Batch* outputs are Paddle's internal buffers; here they hold the gates, r*h_prev and the
# hidden states in LoD row order.
@defop("gru", inputs=("Input", "H0", "Weight", "Bias"),
       outputs=("Hidden", "BatchGate", "BatchResetHiddenPrev", "BatchHidden"), lod_in=("Input",),
       infer_shape=_gru_shape)
def gru(op, ctx):
    reverse, origin = attr(op, "is_reverse", False), attr(op, "origin_mode", False)
    act_g, act_c = _act(op, "gate_activation", "sigmoid"), _act(op, "activation", "tanh")

    def k(x, h0, w, b, lod):
        off = _offsets(op, lod, x.shape[0])
        hs = w.shape[0]
        if x.shape[1] != 3 * hs or w.shape[1] != 3 * hs:
            raise ValueError("gru: Input=%s is %s and Weight=%s is %s; need [T, 3H] and [H, 3H]"
                             % (op.input("Input")[0], list(x.shape), op.input("Weight")[0], list(w.shape)))
        wg, wc = _gru_weights(w, hs)
        idx, mask, back = _time_major(off, reverse)
        n = idx.shape[1]
        xs = x.index_select(0, idx.reshape(-1)).reshape(idx.shape[0], n, 3 * hs)
        if b is not None:
            xs = xs + b.reshape(-1)
        h = h0 if h0 is not None else x.new_zeros(n, hs)
        outs_h, outs_g, outs_r = [], [], []
        for t in range(idx.shape[0]):
            h_new, g, rh = _gru_step(xs[t], h, wg, wc, hs, act_g, act_c, origin)
            h = torch.where(mask[t], h_new, h)
            outs_h.append(h_new)
            outs_g.append(g)
            outs_r.append(rh)
        if not outs_h:
            e = x.new_zeros(0, hs)
            return e, x.new_zeros(0, 3 * hs), e, e
        hidden = _scatter_back(outs_h, back)
        return hidden, _scatter_back(outs_g, back).detach(), _scatter_back(outs_r, back).detach(), hidden.detach()

    return k


def _gru_unit_shape(ins, attrs):
    x, w = first(ins, "Input"), first(ins, "Weight")
    h = w.shape[0]
    return {"Gate": OutMeta((x.shape[0], 3 * h), x.dtype), "ResetHiddenPrev": OutMeta((x.shape[0], h), x.dtype),
            "Hidden": OutMeta((x.shape[0], h), x.dtype)}


@defop("gru_unit", inputs=("Input", "HiddenPrev", "Weight", "Bias"), outputs=("Gate", "ResetHiddenPrev", "Hidden"),
       infer_shape=_gru_unit_shape)
def gru_unit(op, ctx):
    origin = attr(op, "origin_mode", False)
    act_g, act_c = _act(op, "gate_activation", 1), _act(op, "activation", 2)

    def k(x, h, w, b):
        hs = w.shape[0]
        if x.shape[-1] != 3 * hs or h.shape[-1] != hs:
            raise ValueError("gru_unit: Input=%s is %s, HiddenPrev=%s is %s, Weight is %s; need [N, 3H], "
                             "[N, H], [H, 3H]" % (op.input("Input")[0], list(x.shape),
                                                  op.input("HiddenPrev")[0], list(h.shape), list(w.shape)))
        wg, wc = _gru_weights(w, hs)
        if b is not None:
            x = x + b.reshape(-1)
        h_new, g, rh = _gru_step(x, h, wg, wc, hs, act_g, act_c, origin)
        return g.detach(), rh.detach(), h_new

    return k


def _lstm_unit_shape(ins, attrs):
    c = first(ins, "C_prev")
    return {"C": OutMeta(c.shape, c.dtype), "H": OutMeta(c.shape, c.dtype)}


# lstm_unit: X [N, 4H] holds the gate pre-activations in the order i, f, o, g (Paddle's lstm_unit_op);
# c = sigmoid(f + forget_bias) * c_prev + sigmoid(i) * tanh(g), h = sigmoid(o) * tanh(c).
@defop("lstm_unit", inputs=("X", "C_prev"), outputs=("C", "H"), infer_shape=_lstm_unit_shape)
def lstm_unit(op, ctx):
    fb = float(attr(op, "forget_bias", 0.0))

    def k(x, c_prev):
        hs = c_prev.shape[-1]
        if x.shape[-1] != 4 * hs or x.shape[0] != c_prev.shape[0]:
            raise ValueError("lstm_unit: X=%s is %s but C_prev=%s is %s; X needs [N, 4 * %d]"
                             % (op.input("X")[0], list(x.shape), op.input("C_prev")[0], list(c_prev.shape), hs))
        i, f, o, g = x.split(hs, dim=1)
        c = torch.sigmoid(f + fb) * c_prev + torch.sigmoid(i) * torch.tanh(g)
        return c, torch.sigmoid(o) * torch.tanh(c)

    return k
