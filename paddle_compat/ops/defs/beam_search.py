"""Beam search on 2-level LoD tensors (Paddle 1.8's beam_search and beam_search_decode) and the LoD-only ops
lod_reset / lod_append (one op type, `append` attribute), and gather_tree (the beams' ids read back
through their parents, for dynamic_decode).

LoD layout of one decoding step (Paddle's): level 0 groups the prefixes (rows of the previous step) by
source sentence, level 1 says how many candidates each prefix produced. beam_search keeps, per source, the
beam_size best candidates over all its prefixes; a prefix that already ended (pre_id == end_id) offers only
itself (end_id with its previous score); a source whose every kept candidate is an ended prefix's end_id is
dropped (its level-0 entry becomes empty). All of it is a few sorts over every candidate at once.
"""

from ...ir.lazy import torch, torch_dtype
from ..registry import attr, defop, OutMeta
from ..shapes import first


def abs_offsets(lod, level):
    """Paddle's ToAbsOffset for one level: offsets into rows instead of into the next level."""
    off = lod[level]
    for lower in lod[level + 1:]:
        off = lower.index_select(0, off)
    return off


def _name(op, slot):
    names = op.input(slot)
    return names[0] if names else "?"


def _beam_shape(ins, attrs):
    ids, sc = first(ins, "pre_ids"), first(ins, "pre_scores")
    return {"selected_ids": OutMeta((-1, 1), ids.dtype, 2), "selected_scores": OutMeta((-1, 1), sc.dtype, 2),
            "parent_idx": OutMeta((-1,), "int32")}


@defop("beam_search", inputs=("pre_ids", "pre_scores", "ids", "scores"),
       outputs=("selected_ids", "selected_scores", "parent_idx"), lod_in=("scores",),
       lod_out=("selected_ids", "selected_scores"), infer_shape=_beam_shape, differentiable=False, host="data")
def beam_search(op, ctx):
    level, beam = int(attr(op, "level", 0)), int(attr(op, "beam_size"))
    end_id, accumulated = int(attr(op, "end_id")), bool(attr(op, "is_accumulated", True))

    def k(pre_ids, pre_scores, ids, scores, lod):
        rows, width, high = _check_beam_inputs(op, pre_ids, pre_scores, ids, scores, lod, level)
        dev = scores.device
        pid, psc = pre_ids.reshape(rows).long(), pre_scores.reshape(rows).to(scores.dtype)
        sc = scores.detach().reshape(rows, width)
        cid = ids.reshape(rows, width).long() if ids is not None else \
            torch.arange(width, device=dev).expand(rows, width)
        if not accumulated:
            sc = psc.unsqueeze(1) + torch.log(sc)
        ended = pid == end_id
        col = torch.arange(width, device=dev).expand(rows, width)
        # an ended prefix offers one candidate: end_id with its previous score
        sc = torch.where(ended.unsqueeze(1), psc.unsqueeze(1).expand(rows, width), sc).reshape(-1)
        cid = torch.where(ended.unsqueeze(1), torch.full_like(cid, end_id), cid).reshape(-1)
        valid = (~ended.unsqueeze(1) | (col == 0)).reshape(-1)
        row = torch.arange(rows, device=dev).repeat_interleave(width)
        sel = _best_per_source(sc, valid, row, col, high, width, beam)
        kept, krow, low = _drop_finished_sources(sel, row, cid, ended, end_id, beam, rows)
        out_lod = (high, low)
        sel_ids = cid.index_select(0, kept).to(pre_ids.dtype).reshape(-1, 1)
        sel_sc = sc.index_select(0, kept).to(pre_scores.dtype).reshape(-1, 1)
        return sel_ids, sel_sc, krow.to(torch.int32), out_lod, out_lod

    return k


def _check_beam_inputs(op, pre_ids, pre_scores, ids, scores, lod, level):
    """(prefix rows, candidates per prefix, offsets of each source's prefixes), once the inputs agree."""
    sname = _name(op, "scores")
    if not lod or len(lod) <= level:
        raise ValueError("beam_search: scores=%s needs a LoD with more than %d level(s) (level 0: prefixes "
                         "per source, level 1: candidates per prefix), got %s"
                         % (sname, level, None if not lod else [o.tolist() for o in lod]))
    rows = scores.shape[0]
    width = scores.numel() // rows if rows else 1
    high = abs_offsets(lod, level)
    if int(high[-1]) != rows or int(high[0]) != 0:
        raise ValueError("beam_search: the LoD of scores=%s (%s) does not cover its %d rows"
                         % (sname, [o.tolist() for o in lod], rows))
    for slot, t in (("pre_ids", pre_ids), ("pre_scores", pre_scores)):
        if t.numel() != rows:
            raise ValueError("beam_search: %s=%s has %d elements but scores=%s has %d rows (one per prefix)"
                             % (slot, _name(op, slot), t.numel(), sname, rows))
    if ids is not None and ids.numel() != scores.numel():
        raise ValueError("beam_search: ids=%s is %s but scores=%s is %s" % (
            _name(op, "ids"), list(ids.shape), sname, list(scores.shape)))
    return rows, width, high


def _best_per_source(sc, valid, row, col, high, width, beam):
    """[sources, beam_size]: each source's best candidates (flat candidate indices, best first; -1 past the
    usable ones)."""
    dev = sc.device
    rows = col.shape[0]
    nseq = high.numel() - 1
    seq_lens = high[1:] - high[:-1]
    seq_of_row = torch.repeat_interleave(torch.arange(nseq, device=dev), seq_lens, output_size=rows)
    # Each source's candidates in one row of a padded [sources, most candidates] block, laid out by
    # prefix from the last to the first, columns in order: a stable descending sort of the scores then
    # gives Paddle's order (higher score, then the later prefix, then the earlier column).
    most = int(seq_lens.max()) * width if nseq and rows else 0
    seq = seq_of_row.index_select(0, row)
    slot = (high[1:].index_select(0, seq) - 1 - row) * width + col.reshape(-1)
    block = torch.full((nseq * most,), -1, dtype=torch.long, device=dev)
    block = block.index_copy(0, seq * most + slot, torch.arange(rows * width, device=dev)).reshape(nseq, most)
    present = block >= 0
    cand = block.clamp(min=0)
    usable = present & valid.index_select(0, cand.reshape(-1)).reshape(nseq, most)
    key = torch.where(usable, sc.index_select(0, cand.reshape(-1)).reshape(nseq, most),
                      torch.zeros((), dtype=sc.dtype, device=dev))
    order = torch.sort(key, dim=1, descending=True, stable=True)[1]
    order = order.gather(1, torch.sort((~usable).gather(1, order).to(torch.int8), dim=1, stable=True)[1])
    top = order[:, :beam]
    sel = torch.where(usable.gather(1, top), cand.gather(1, top), torch.full_like(top, -1))
    if most > beam:
        _edge_ties(sel, order, usable, cand, sc, row, high, valid, width, beam)
    return sel


def _drop_finished_sources(sel, row, cid, ended, end_id, beam, rows):
    """The kept candidates (flat indices) grouped by prefix, best first, their prefixes, and the offsets of
    each prefix's candidates; without the sources that are finished."""
    dev = sel.device
    nseq = sel.shape[0]
    kept_ok = sel >= 0
    kept = sel[kept_ok]
    kseq = torch.arange(nseq, device=dev).unsqueeze(1).expand_as(sel)[kept_ok]
    krank = torch.arange(sel.shape[1], device=dev).expand_as(sel)[kept_ok]
    # a source all of whose kept candidates are ended prefixes repeating end_id is finished: pruned
    krow = row.index_select(0, kept)
    done = (cid.index_select(0, kept) == end_id) & ended.index_select(0, krow)
    live = torch.bincount(kseq, weights=(~done).to(torch.float64), minlength=nseq) > 0
    alive = live.index_select(0, kseq)
    kept, krow, krank = kept[alive], krow[alive], krank[alive]
    regroup = torch.sort(krow * max(beam, 1) + krank)[1]     # grouped by prefix, best first (unique keys)
    kept, krow = kept.index_select(0, regroup), krow.index_select(0, regroup)
    low = torch.cat([krow.new_zeros(1), torch.cumsum(torch.bincount(krow, minlength=rows), 0)])
    return kept, krow, low


def _edge_ties(sel, order, usable, cand, sc, row, high, valid, width, beam):
    """Sources whose beam_size-th and next candidates tie exactly (same score, same prefix): which of the tied
    columns Paddle keeps depends on the order its insertion into a sorted beam meets them, so those sources
    (rare: exact float ties) are replayed the same way, one candidate at a time."""
    at_edge = order[:, beam - 1:beam + 1]
    c = cand.gather(1, at_edge)
    s, r = sc.index_select(0, c.reshape(-1)).reshape(-1, 2), row.index_select(0, c.reshape(-1)).reshape(-1, 2)
    tie = usable.gather(1, at_edge).all(1) & (s[:, 0] == s[:, 1]) & (r[:, 0] == r[:, 1])
    for src in torch.nonzero(tie).reshape(-1).tolist():
        lo, hi = int(high[src]) * width, int(high[src + 1]) * width
        ok = valid[lo:hi].tolist()
        scores, rows = sc[lo:hi].tolist(), row[lo:hi].tolist()
        beam_items = []     # (score, prefix, candidate), best first; Paddle's Item order: score, then prefix
        for j in range(hi - lo):
            if not ok[j]:
                continue
            item = (scores[j], rows[j], lo + j)
            if len(beam_items) == beam and item[:2] < beam_items[-1][:2]:
                continue
            if len(beam_items) < beam:
                beam_items.append(item)
            k = len(beam_items) - 2
            while k >= 0 and beam_items[k][:2] < item[:2]:
                beam_items[k + 1] = beam_items[k]
                k -= 1
            beam_items[k + 1] = item
        sel[src] = -1
        sel[src, :len(beam_items)] = torch.tensor([it[2] for it in beam_items], dtype=sel.dtype, device=sel.device)


def _decode_shape(ins, attrs):
    ids, sc = first(ins, "Ids"), first(ins, "Scores")
    # 1-D, as the tensors Paddle 1.8.5 returns ([n_words]); its build-time shape is () (not inferred)
    return {"SentenceIds": OutMeta((-1,), ids.dtype, 2), "SentenceScores": OutMeta((-1,), sc.dtype, 2)}


def array_lods(arr):
    """The LoD of each element of a LoDTensorArray value (control_flow.TensorArray keeps them)."""
    return list(getattr(arr, "lods", None) or [None] * len(arr))


# Walks the steps from the last back to the first. A source's sentences start at the last step where it
# has candidates (one per candidate, in order); each then follows its parent prefix back, taking one word
# per step (an end_id after the first word is skipped: ended beams repeat it). The sentences of a source
# come out best first by their final score, words in time order. Paddle crashes when a source ends with
# fewer than beam_size candidates (it sorts empty sentences); here only the real sentences are returned.
@defop("beam_search_decode", inputs=("Ids", "Scores"), outputs=("SentenceIds", "SentenceScores"),
       lod_out=("SentenceIds", "SentenceScores"), infer_shape=_decode_shape, differentiable=False,
       host="data", operator_base=True)
def beam_search_decode(op, ctx):
    end_id = int(attr(op, "end_id"))
    iname, sname = _name(op, "Ids"), _name(op, "Scores")

    def k(ids_arr, sc_arr):
        id_lods = _check_decode_inputs(ids_arr, sc_arr, iname, sname)
        sent_src, words = _walk_steps_back(ids_arr, sc_arr, id_lods, end_id, iname)
        nsrc = id_lods[0][0].numel() - 1
        return _sentences_best_first(sent_src, words, nsrc, ids_arr[0].dtype, sc_arr[0].dtype)

    return k


def _check_decode_inputs(ids_arr, sc_arr, iname, sname):
    """Each step's LoD, once every step has a 2-level LoD that Scores shares."""
    if not ids_arr:
        raise ValueError("beam_search_decode: Ids=%s is an empty array" % iname)
    if sc_arr is None or len(sc_arr) != len(ids_arr):
        raise ValueError("beam_search_decode: Ids=%s has %d steps but Scores=%s has %d"
                         % (iname, len(ids_arr), sname, 0 if sc_arr is None else len(sc_arr)))
    id_lods, sc_lods = array_lods(ids_arr), array_lods(sc_arr)
    for t, (lod, slod) in enumerate(zip(id_lods, sc_lods)):
        if ids_arr[t] is None or not lod or len(lod) != 2:
            raise ValueError("beam_search_decode: step %d of Ids=%s needs a 2-level LoD, got %s"
                             % (t, iname, None if not lod else [o.tolist() for o in lod]))
        if slod is not None and [o.tolist() for o in slod] != [o.tolist() for o in lod]:
            raise ValueError("beam_search_decode: step %d: Ids=%s has LoD %s but Scores=%s has %s"
                             % (t, iname, [o.tolist() for o in lod], sname, [o.tolist() for o in slod]))
    return id_lods


def _walk_steps_back(ids_arr, sc_arr, id_lods, end_id, iname):
    """(source of each sentence, words): per step, from the last, the (sentence index, id, score) of the words
    the sentences take there (see beam_search_decode)."""
    dev = ids_arr[0].device
    nsrc = id_lods[0][0].numel() - 1
    sent_src = torch.zeros(0, dtype=torch.long, device=dev)    # per sentence: its source
    ptr = torch.zeros(0, dtype=torch.long, device=dev)         # per sentence: candidate at this step
    length = torch.zeros(0, dtype=torch.long, device=dev)
    words = []
    for t in range(len(ids_arr) - 1, -1, -1):
        lod0, lod1 = id_lods[t]
        ids_t, sc_t = ids_arr[t].reshape(-1), sc_arr[t].reshape(-1)
        if lod0.numel() - 1 != nsrc or int(lod1[-1]) != ids_t.numel():
            raise ValueError("beam_search_decode: step %d of Ids=%s: LoD %s does not fit %d sources and %d "
                             "rows" % (t, iname, [o.tolist() for o in id_lods[t]], nsrc, ids_t.numel()))
        # existing sentences take the word their pointer names
        wid, wsc = ids_t.index_select(0, ptr), sc_t.index_select(0, ptr)
        take = (wid != end_id) | (length == 0)
        idx = torch.nonzero(take).reshape(-1)
        words.append((idx, wid[take], wsc[take]))
        length = length + take.long()
        ptr = torch.searchsorted(lod1, ptr, right=True) - 1
        src_new, cand = _new_sentences(sent_src, lod0, lod1, nsrc, dev)
        if src_new is not None:
            base = sent_src.numel()
            words.append((torch.arange(base, base + cand.numel(), device=dev), ids_t.index_select(0, cand),
                          sc_t.index_select(0, cand)))
            sent_src = torch.cat([sent_src, src_new])
            ptr = torch.cat([ptr, torch.searchsorted(lod1, cand, right=True) - 1])
            length = torch.cat([length, torch.ones_like(src_new)])
    return sent_src, words


def _new_sentences(sent_src, lod0, lod1, nsrc, dev):
    """(source, candidate) of the sentences that start at this step: one per candidate of each source that
    has no sentence yet; (None, None) when there are none."""
    has = torch.bincount(sent_src, minlength=nsrc) > 0
    cand_lo, cand_hi = lod1.index_select(0, lod0[:-1]), lod1.index_select(0, lod0[1:])
    n_new = torch.where(has, torch.zeros_like(cand_lo), cand_hi - cand_lo)
    total = int(n_new.sum())
    if not total:
        return None, None
    src_new = torch.repeat_interleave(torch.arange(nsrc, device=dev), n_new, output_size=total)
    first_new = torch.cumsum(n_new, 0) - n_new
    cand = cand_lo.index_select(0, src_new) + torch.arange(total, device=dev) - first_new.index_select(0, src_new)
    return src_new, cand


def _sentences_best_first(sent_src, words, nsrc, id_dtype, sc_dtype):
    """SentenceIds, SentenceScores and their LoD: a source's sentences best first by final score, each
    sentence's words in time order."""
    dev = sent_src.device
    n = sent_src.numel()
    w_sent = torch.cat([w[0] for w in words])
    w_id = torch.cat([w[1].to(id_dtype) for w in words])
    w_sc = torch.cat([w[2].to(sc_dtype) for w in words])
    w_rev = torch.arange(w_sent.numel() - 1, -1, -1, device=dev)    # later steps were recorded first
    # the first word recorded for a sentence (its last step) holds its final score
    first_pos = torch.full((n,), w_sent.numel(), dtype=torch.long, device=dev).scatter_reduce(
        0, w_sent, torch.arange(w_sent.numel(), device=dev), reduce="amin")
    final = w_sc.index_select(0, first_pos)
    sent_order = torch.argsort(-final, stable=True)
    sent_order = sent_order.index_select(0, torch.argsort(sent_src.index_select(0, sent_order), stable=True))
    rank = torch.empty_like(sent_order)
    rank[sent_order] = torch.arange(n, device=dev)
    # words: by sentence rank, then in time order (reverse of recording)
    wo = torch.argsort(w_rev, stable=True)
    wo = wo.index_select(0, torch.argsort(rank.index_select(0, w_sent.index_select(0, wo)), stable=True))
    lens = torch.bincount(w_sent, minlength=n).index_select(0, sent_order)
    lod0 = torch.cat([lens.new_zeros(1), torch.cumsum(torch.bincount(sent_src, minlength=nsrc), 0)])
    lod1 = torch.cat([lens.new_zeros(1), torch.cumsum(lens, 0)])
    out_lod = (lod0, lod1)
    return w_id.index_select(0, wo), w_sc.index_select(0, wo), out_lod, out_lod


# ---- lod_reset / lod_append ----------------------------------------------------------------------------

def _lod_reset_shape(ins, attrs):
    x, y = first(ins, "X"), first(ins, "Y")
    if attrs.get("append"):
        level = x.lod_level + 1
    else:
        level = y.lod_level if y is not None and y.lod_level > 0 else 1
    return {"Out": OutMeta(x.shape, x.dtype, level)}


# Out is X with a new LoD: Y's LoD when Y carries one (taken whole, as Paddle does, even with append),
# else one level of offsets from Y's data or the target_lod attribute, replacing X's LoD or (append)
# added below it.
@defop("lod_reset", inputs=("X", "Y"), lod_in=("X", "Y"), lod_out=("Out",), grad_lod=("X",), infer_shape=_lod_reset_shape,
       no_grad=("Y",), host="data")
def lod_reset(op, ctx):
    append = bool(attr(op, "append", False))
    target = attr(op, "target_lod", None)
    xname = _name(op, "X")

    def k(x, y, x_lod, y_lod):
        if y is not None and y_lod:
            return x, tuple(y_lod)
        if y is not None:
            level = y.reshape(-1).long()
            what = "Y=%s" % _name(op, "Y")
        elif target:
            level = torch.tensor([int(v) for v in target], dtype=torch.long, device=x.device)
            what = "target_lod"
        else:
            raise ValueError("%s: neither Y nor target_lod gives X=%s a LoD" % (op.type, xname))
        vals = level.tolist()
        if len(vals) < 2 or vals[0] != 0 or vals[-1] != x.shape[0] or any(b < a for a, b in zip(vals, vals[1:])):
            raise ValueError("%s: %s %s must be ascending offsets from 0 to the %d rows of X=%s"
                             % (op.type, what, vals, x.shape[0], xname))
        if append:
            return x, tuple(x_lod or ()) + (level,)
        return x, (level,)

    return k


@defop("gather_tree", inputs=("Ids", "Parents"),
       infer_shape=lambda ins, attrs: {"Out": OutMeta(first(ins, "Ids").shape, first(ins, "Ids").dtype)},
       differentiable=False)
def gather_tree(op, ctx):
    def k(ids, parents):
        # ids/parents: [max_time, batch, beam]; walk the parents back from the last step.
        t = ids.shape[0]
        out = torch.empty_like(ids)
        beam = torch.arange(ids.shape[2], device=ids.device).expand(ids.shape[1], -1)
        for step in range(t - 1, -1, -1):
            out[step] = ids[step].gather(1, beam)
            beam = parents[step].gather(1, beam).long()
        return out
    return k
