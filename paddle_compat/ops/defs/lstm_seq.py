"""The dynamic_lstm recurrence with Paddle's default activations (sigmoid gates, tanh cell and candidate) as
one autograd node with a hand-written backward (the same chain rule Paddle's lstm_grad kernel applies).

Why not autograd over the step loop: a 100-step sequence records ~15 small autograd nodes per step, and
their bookkeeping, not the arithmetic, dominated a training step. Here the forward runs under no_grad and
keeps the gate activations; the backward walks the steps once and forms the weight gradient as one matmul.

Sequences run sorted by length, longest first (a packed batch): step t updates only the first sizes[t]
rows, so finished sequences cost nothing and need no masking.
"""

from ...ir.lazy import torch

_FN = None


def packed_plan(off, reverse):
    """-> (perm [N] sequences longest first, sizes [T_max] python ints, rows [total] LoD row of each packed
    position, back [total] packed position of each LoD row)."""
    lengths = off[1:] - off[:-1]
    perm = torch.argsort(lengths, descending=True, stable=True)
    srt = lengths.index_select(0, perm)
    t_max = int(srt[0]) if srt.numel() else 0
    steps = torch.arange(t_max, device=off.device)
    mask = steps.unsqueeze(1) < srt.unsqueeze(0)                       # [T_max, N]
    t_idx, j_idx = mask.nonzero(as_tuple=True)                         # row-major: step by step
    rel = (srt.index_select(0, j_idx) - 1 - t_idx) if reverse else t_idx
    rows = off.index_select(0, perm.index_select(0, j_idx)) + rel
    back = torch.empty_like(rows)
    back[rows] = torch.arange(rows.numel(), device=off.device)
    return perm, mask.sum(1).tolist(), rows, back


def lstm_packed(xp, w, peep, h0, c0, sizes):
    """xp [total, 4H] gate inputs (bias added) in packed order; w [H, 4H]; peep [3H] (W_ic, W_fc, W_oc) or
    None; h0/c0 [sizes[0], H] sorted rows. Gate columns: candidate, input, forget, output.
    -> (hidden [total, H], cell [total, H]) in packed order."""
    global _FN
    if _FN is None:
        _FN = _make_fn()
    return _FN.apply(xp, w, peep, h0, c0, tuple(sizes))


def _make_fn():
    # torch loads lazily (ir.lazy): the Function class is made on first use
    class LstmPacked(torch.autograd.Function):
        forward = staticmethod(_forward)
        backward = staticmethod(_backward)

    return LstmPacked


def _peepholes(peep, hs):
    """(W_ic, W_fc, W_oc), or None without peepholes."""
    return None if peep is None else (peep[:hs], peep[hs:2 * hs], peep[2 * hs:])


def _forward(ctx, xp, w, peep, h0, c0, sizes):
    hs = w.shape[0]
    hid = xp.new_empty(xp.shape[0], hs)
    cell = xp.new_empty(xp.shape[0], hs)
    acts = xp.new_empty(xp.shape[0], 4 * hs)     # tanh(candidate), sigmoid(input, forget, output)
    tcell = xp.new_empty(xp.shape[0], hs)
    pw = _peepholes(peep, hs)
    h, c, pos = h0, c0, 0
    for n in sizes:
        sl = slice(pos, pos + n)
        c = _gates_and_cell(torch.addmm(xp[sl], h[:n], w), c[:n], acts[sl], pw, hs, cell[sl])
        tc = torch.tanh(c, out=tcell[sl])
        h = torch.mul(acts[sl, 3 * hs:], tc, out=hid[sl])
        pos += n
    ctx.sizes = sizes
    ctx.set_materialize_grads(False)     # the cell output is usually detached: no zeros to add
    ctx.save_for_backward(w, peep, h0, c0, hid, cell, acts, tcell)
    return hid, cell


def _gates_and_cell(g, cp, a, pw, hs, cell_out):
    """One step: the gate activations of pre-activations g [n, 4H] into a, and the new cell (from the previous
    cp) into cell_out, which is returned. pw: the peepholes (input and forget gates see cp, output the new c)."""
    torch.tanh(g[:, :hs], out=a[:, :hs])
    if pw is None:
        torch.sigmoid(g[:, hs:], out=a[:, hs:])
        return torch.addcmul(a[:, :hs] * a[:, hs:2 * hs], cp, a[:, 2 * hs:3 * hs], out=cell_out)
    w_ic, w_fc, w_oc = pw
    torch.sigmoid(torch.addcmul(g[:, hs:2 * hs], cp, w_ic), out=a[:, hs:2 * hs])
    torch.sigmoid(torch.addcmul(g[:, 2 * hs:3 * hs], cp, w_fc), out=a[:, 2 * hs:3 * hs])
    c = torch.addcmul(a[:, :hs] * a[:, hs:2 * hs], cp, a[:, 2 * hs:3 * hs], out=cell_out)
    torch.sigmoid(torch.addcmul(g[:, 3 * hs:], c, w_oc), out=a[:, 3 * hs:])
    return c


def _backward(ctx, d_hid, d_cell):
    w, peep, h0, c0, hid, cell, acts, tcell = ctx.saved_tensors
    sizes = ctx.sizes
    hs = w.shape[0]
    starts = [0]
    for n in sizes[:-1]:
        starts.append(starts[-1] + n)
    c_prev = _previous(c0, cell, sizes, starts)
    h_prev = _previous(h0, hid, sizes, starts)
    local = _local_derivatives(acts, tcell, c_prev, hs)
    if d_hid is None:
        d_hid = hid.new_zeros(hid.shape)
    pw = _peepholes(peep, hs)
    dg, dh_next, dc_next = _gate_grads(w, pw, d_hid, d_cell, local, sizes, starts)
    dw = h_prev.t() @ dg
    dpeep = None
    if peep is not None:
        dpeep = torch.cat([(dg[:, hs:2 * hs] * c_prev).sum(0), (dg[:, 2 * hs:3 * hs] * c_prev).sum(0),
                           (dg[:, 3 * hs:] * cell).sum(0)])
    dh0 = dc0 = None
    if ctx.needs_input_grad[3]:
        dh0 = h0.new_zeros(h0.shape)
        dh0[:dh_next.shape[0]] = dh_next
    if ctx.needs_input_grad[4]:
        dc0 = c0.new_zeros(c0.shape)
        dc0[:dc_next.shape[0]] = dc_next
    return dg, dw, dpeep, dh0, dc0, None


def _previous(first, packed, sizes, starts):
    """Every packed row's previous cell/hidden: `first` (c0/h0) at step 0, else the same sequence one step
    earlier."""
    return torch.cat([first[:sizes[0]]] + [packed[starts[t - 1]:starts[t - 1] + sizes[t]]
                                           for t in range(1, len(sizes))], 0)


def _local_derivatives(acts, tcell, c_prev, hs):
    """The local derivatives, for all steps at once, so the step loop is a few ops per step: (d_o, d_c, d3,
    af) with dgo = dh * d_o, dc += dh * d_c, d3 [total, 3, H] the candidate, input and forget gates' from dc,
    af the forget gate."""
    ac, ai, af, ao = acts[:, :hs], acts[:, hs:2 * hs], acts[:, 2 * hs:3 * hs], acts[:, 3 * hs:]
    d_o = tcell * ao * (1 - ao)
    d_c = ao * (1 - tcell * tcell)
    d3 = torch.cat([ai * (1 - ac * ac), ac * ai * (1 - ai), c_prev * af * (1 - af)], 1)
    return d_o, d_c, d3.view(acts.shape[0], 3, hs), af.contiguous()


def _gate_grads(w, pw, d_hid, d_cell, local, sizes, starts):
    """The steps walked backward: (dg [total, 4H] the gates' pre-activation gradients, dh and dc of the
    initial state's rows)."""
    d_o, d_c, d3, af = local
    hs = w.shape[0]
    dg = d_hid.new_empty(d_hid.shape[0], 4 * hs)
    dg3 = dg.view(d_hid.shape[0], 4, hs)
    wt = w.t()
    dh_next = dc_next = None
    for t in range(len(sizes) - 1, -1, -1):
        n, pos = sizes[t], starts[t]
        sl = slice(pos, pos + n)
        dh, dc = _carried(d_hid[sl], d_cell[sl] if d_cell is not None else None, dh_next, dc_next)
        dgo = torch.mul(dh, d_o[sl], out=dg[sl, 3 * hs:])
        dct = torch.addcmul(dc, dh, d_c[sl])
        if pw is not None:
            dct.addcmul_(dgo, pw[2])
        torch.mul(dct.unsqueeze(1), d3[sl], out=dg3[sl, :3])
        dc_next = dct * af[sl]
        if pw is not None:
            dc_next.addcmul_(dg[sl, hs:2 * hs], pw[0]).addcmul_(dg[sl, 2 * hs:3 * hs], pw[1])
        dh_next = dg[sl] @ wt
    return dg, dh_next, dc_next


def _carried(dh, dc, dh_next, dc_next):
    """One step's dh and dc: the outputs' own gradients (dc may be None) plus what the next step carries back
    to its first dh_next.shape[0] rows (the sequences still running then)."""
    n = dh.shape[0]
    if dh_next is not None:
        m = dh_next.shape[0]
        if m == n:
            dh = dh + dh_next
            dc = dc_next if dc is None else dc + dc_next
        else:
            dh = dh.clone()
            dh[:m] += dh_next
            dc = dc.clone() if dc is not None else dh.new_zeros(n, dh.shape[1])
            dc[:m] += dc_next
    if dc is None:
        dc = dh.new_zeros(n, dh.shape[1])
    return dh, dc
