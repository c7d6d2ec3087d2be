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
    class LstmPacked(torch.autograd.Function):
        @staticmethod
        def forward(ctx, xp, w, peep, h0, c0, sizes):
            hs = w.shape[0]
            hid = xp.new_empty(xp.shape[0], hs)
            cell = xp.new_empty(xp.shape[0], hs)
            acts = xp.new_empty(xp.shape[0], 4 * hs)     # tanh(candidate), sigmoid(input, forget, output)
            tcell = xp.new_empty(xp.shape[0], hs)
            if peep is not None:
                w_ic, w_fc, w_oc = peep[:hs], peep[hs:2 * hs], peep[2 * hs:]
            h, c, pos = h0, c0, 0
            for n in sizes:
                g = torch.addmm(xp[pos:pos + n], h[:n], w)
                cp = c[:n]
                a = acts[pos:pos + n]
                torch.tanh(g[:, :hs], out=a[:, :hs])
                if peep is None:
                    torch.sigmoid(g[:, hs:], out=a[:, hs:])
                    c = torch.addcmul(a[:, :hs] * a[:, hs:2 * hs], cp, a[:, 2 * hs:3 * hs], out=cell[pos:pos + n])
                else:
                    torch.sigmoid(torch.addcmul(g[:, hs:2 * hs], cp, w_ic), out=a[:, hs:2 * hs])
                    torch.sigmoid(torch.addcmul(g[:, 2 * hs:3 * hs], cp, w_fc), out=a[:, 2 * hs:3 * hs])
                    c = torch.addcmul(a[:, :hs] * a[:, hs:2 * hs], cp, a[:, 2 * hs:3 * hs], out=cell[pos:pos + n])
                    torch.sigmoid(torch.addcmul(g[:, 3 * hs:], c, w_oc), out=a[:, 3 * hs:])
                tc = torch.tanh(c, out=tcell[pos:pos + n])
                h = torch.mul(a[:, 3 * hs:], tc, out=hid[pos:pos + n])
                pos += n
            ctx.sizes = sizes
            ctx.set_materialize_grads(False)     # the cell output is usually detached: no zeros to add
            ctx.save_for_backward(w, peep, h0, c0, hid, cell, acts, tcell)
            return hid, cell

        @staticmethod
        def backward(ctx, d_hid, d_cell):
            w, peep, h0, c0, hid, cell, acts, tcell = ctx.saved_tensors
            sizes = ctx.sizes
            hs = w.shape[0]
            total = hid.shape[0]
            starts = [0]
            for n in sizes[:-1]:
                starts.append(starts[-1] + n)
            # every packed row's previous cell/hidden: c0/h0 at step 0, else the same sequence one step earlier
            c_prev = torch.cat([c0[:sizes[0]]] + [cell[starts[t - 1]:starts[t - 1] + sizes[t]]
                                                  for t in range(1, len(sizes))], 0)
            h_prev = torch.cat([h0[:sizes[0]]] + [hid[starts[t - 1]:starts[t - 1] + sizes[t]]
                                                  for t in range(1, len(sizes))], 0)
            # the local derivatives, for all steps at once, so the step loop below is a few ops per step
            ac, ai, af, ao = acts[:, :hs], acts[:, hs:2 * hs], acts[:, 2 * hs:3 * hs], acts[:, 3 * hs:]
            d_o = tcell * ao * (1 - ao)                          # dgo = dh * d_o
            d_c = ao * (1 - tcell * tcell)                       # dc += dh * d_c
            d3 = torch.cat([ai * (1 - ac * ac), ac * ai * (1 - ai), c_prev * af * (1 - af)], 1)
            d3 = d3.view(total, 3, hs)                           # candidate, input, forget gates from dc
            af = af.contiguous()
            if d_hid is None:
                d_hid = hid.new_zeros(hid.shape)
            dg = hid.new_empty(total, 4 * hs)
            dg3 = dg.view(total, 4, hs)
            if peep is not None:
                w_ic, w_fc, w_oc = peep[:hs], peep[hs:2 * hs], peep[2 * hs:]
            wt = w.t()
            dh_next = dc_next = None
            for t in range(len(sizes) - 1, -1, -1):
                n, pos = sizes[t], starts[t]
                sl = slice(pos, pos + n)
                dh = d_hid[sl]
                dc = d_cell[sl] if d_cell is not None else None
                if dh_next is not None:
                    m = dh_next.shape[0]
                    if m == n:
                        dh = dh + dh_next
                        dc = dc_next if dc is None else dc + dc_next
                    else:
                        dh = dh.clone()
                        dh[:m] += dh_next
                        dc = dc.clone() if dc is not None else hid.new_zeros(n, hs)
                        dc[:m] += dc_next
                if dc is None:
                    dc = hid.new_zeros(n, hs)
                dgo = torch.mul(dh, d_o[sl], out=dg[sl, 3 * hs:])
                dct = torch.addcmul(dc, dh, d_c[sl])
                if peep is not None:
                    dct.addcmul_(dgo, w_oc)
                torch.mul(dct.unsqueeze(1), d3[sl], out=dg3[sl, :3])
                dc_next = dct * af[sl]
                if peep is not None:
                    dc_next.addcmul_(dg[sl, hs:2 * hs], w_ic).addcmul_(dg[sl, 2 * hs:3 * hs], w_fc)
                dh_next = dg[sl] @ wt
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

    return LstmPacked
