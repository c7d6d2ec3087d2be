"""pyramid_hash (fluid.contrib.layers.search_pyramid_hash): hashed embeddings of the n-grams of each id sequence.

For each LoD sequence of ids (X [T, 1], int32; see the kernel for [T, K]) and each n-gram length n = 2 ..
pyramid_layer (shorter than the sequence), every window of n consecutive ids is one term, in the order (sequence,
n, start). A term's bytes are its ids as float32 (Paddle hashes the float copy it keeps in X_Temp_Out); its
embedding is num_emb / rand_len slices of W [space_len + rand_len, 1]: slice j (j = 0, rand_len, 2 rand_len, ...)
is W[p : p + rand_len] with p = XXH32(term bytes, seed=j) % space_len. With use_filter, a term must be in the
WhiteList bloom filter and not in the BlackList one (bloom_filter.py; each list only when its length attr is
nonzero). In training each term that passes is dropped when a glibc rand_r stream seeded with `seed` (restarted every
run, as in Paddle) gives rand / RAND_MAX < drop_out_percent. Out holds the kept terms' embeddings, one sequence
after another (Out's LoD); a sequence with none gets one zero row. Outside training Out is scaled by
drop_out_percent (as Paddle's kernel does). DropPos [T * K * pyramid_layer, 1] holds the 0/1 keep flag of every
term in its first entries (LoD: kept terms per sequence), zeros after (Paddle leaves that memory unwritten).

Gradient: Out is a gather of W, so W@GRAD (when W's stop_gradient is cleared) is the scatter-add of Out@GRAD.
Paddle's pyramid_hash_grad instead moves W in place by -lr * Out@GRAD, and only when X is not stop_gradient (never
for a data variable), so in ordinary programs neither Paddle nor this op changes W. Outside training Paddle's
update also leaves out the drop_out_percent factor of Out; W@GRAD here is Out's true derivative.
"""

import numpy as np

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first
from .bloom_filter import BloomFilter

_M32 = 0xFFFFFFFF
_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393


def _shape(ins, attrs):
    x, w = first(ins, "X"), first(ins, "W")
    space, rand, emb = int(attrs.get("space_len", 0)), int(attrs.get("rand_len", 0)), int(attrs.get("num_emb", 0))
    if len(x.shape) != 2:
        raise ValueError("pyramid_hash: X must be 2-D [T, K] ids, got %s" % list(x.shape))
    if tuple(w.shape) != (space + rand, 1):
        raise ValueError("pyramid_hash: W must be [space_len + rand_len, 1] = [%d, 1], got %s"
                         % (space + rand, list(w.shape)))
    if rand <= 0 or emb % rand:
        raise ValueError("pyramid_hash: num_emb (%d) must be a multiple of rand_len (%d)" % (emb, rand))
    if int(attrs.get("pyramid_layer", 2)) < 2:
        raise ValueError("pyramid_hash: pyramid_layer must be >= 2, got %r" % attrs.get("pyramid_layer"))
    for slot, key in (("WhiteList", "white_list_len"), ("BlackList", "black_list_len")):
        n = int(attrs.get(key, 0))
        if n > 0 and (slot not in ins or tuple(ins[slot][0].shape) != (n, 1)):
            raise ValueError("pyramid_hash: %s > 0 needs a %s input of shape [%d, 1]" % (key, slot, n))
    return {"Out": OutMeta((-1, emb), w.dtype, x.lod_level), "X_Temp_Out": OutMeta(x.shape, w.dtype, x.lod_level),
            "DropPos": OutMeta((-1, 1), "int32", 1)}


def _mul32(a, c):
    """(a * c) mod 2**32 for int64 tensors a < 2**32 and a constant c < 2**32, without int64 overflow."""
    return ((((a >> 16) * c) & _M32) << 16) + (a & 0xFFFF) * c & _M32


def _rotl(a, r):
    return ((a << r) | (a >> (32 - r))) & _M32


def xxh32_words(words, seeds):
    """XXH32 of each row of `words` ([R, n] int64 holding uint32 little-endian words, so 4n bytes) under each
    of `seeds` ([S] int64): [R, S] int64."""
    r, n = words.shape
    s = seeds.view(1, -1)
    length = 4 * n
    w = words.unsqueeze(1)                                                   # [R, 1, n]
    i = 0
    if length >= 16:
        v = [(s + _P1 + _P2) & _M32, (s + _P2) & _M32, s & _M32, (s - _P1) & _M32]
        v = [t.expand(r, -1) for t in v]
        while i + 4 <= n:
            v = [_mul32(_rotl((v[k] + _mul32(w[:, :, i + k], _P2)) & _M32, 13), _P1) for k in range(4)]
            i += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = ((s + _P5) & _M32).expand(r, -1)
    h = (h + length) & _M32
    while i < n:
        h = _mul32(_rotl((h + _mul32(w[:, :, i], _P3)) & _M32, 17), _P4)
        i += 1
    h = h ^ (h >> 15)
    h = _mul32(h, _P2)
    h = h ^ (h >> 13)
    h = _mul32(h, _P3)
    return h ^ (h >> 16)


_LCG_A, _LCG_C = 1103515245, 12345


def rand_r_stream(seed, count):
    """The first `count` values of glibc's rand_r(&s) with s = seed (each call takes three LCG steps), computed
    at once: call t starts from the state 3t steps on, reached by jumping ahead over t's bits."""
    m = np.uint64(_M32)
    t = np.arange(count, dtype=np.uint64)
    state = np.full(count, np.uint64(seed & _M32))
    a3 = np.uint64(_LCG_A ** 3 & _M32)
    c3 = np.uint64((_LCG_C * (_LCG_A ** 2 + _LCG_A + 1)) & _M32)
    ja, jc = a3, c3                               # the jump of 2**b calls
    b = 0
    while count > 1 and (1 << b) < count:
        on = (t >> np.uint64(b)) & np.uint64(1) == 1
        state[on] = (state[on] * ja + jc) & m
        ja, jc = (ja * ja) & m, (ja * jc + jc) & m
        b += 1
    a, c = np.uint64(_LCG_A), np.uint64(_LCG_C)
    s1 = (state * a + c) & m
    s2 = (s1 * a + c) & m
    s3 = (s2 * a + c) & m
    res = (((s1 >> np.uint64(16)) % np.uint64(2048)) << np.uint64(20)) ^ \
          (((s2 >> np.uint64(16)) % np.uint64(1024)) << np.uint64(10)) ^ ((s3 >> np.uint64(16)) % np.uint64(1024))
    return res.astype(np.int64)


def _terms(off, layers):
    """Every n-gram of every sequence: (sequence index, first row, n) in Paddle's order."""
    lens = off[1:] - off[:-1]
    dev = off.device
    seq, start, size = [], [], []
    for n in range(2, layers + 1):
        cnt = (lens - n + 1).clamp(min=0)                                    # windows of n ids per sequence
        total = int(cnt.sum())
        if total == 0:
            continue
        sid = torch.repeat_interleave(torch.arange(lens.numel(), device=dev), cnt)
        first_win = torch.cumsum(cnt, 0) - cnt
        local = torch.arange(total, device=dev) - first_win[sid]
        seq.append(sid)
        start.append(off[:-1][sid] + local)
        size.append(torch.full((total,), n, dtype=torch.int64, device=dev))
    if not seq:
        e = torch.zeros(0, dtype=torch.int64, device=dev)
        return e, e, e
    seq, start, size = torch.cat(seq), torch.cat(start), torch.cat(size)
    order = torch.sort(seq * (layers + 1) + size, stable=True).indices         # sequence-major, then n, then start
    return seq[order], start[order], size[order]


@defop("pyramid_hash", inputs=("X", "W", "WhiteList", "BlackList"), outputs=("Out", "X_Temp_Out", "DropPos"),
       lod_in=("X",), lod_out=("Out", "DropPos"), infer_shape=_shape, no_grad=("X", "WhiteList", "BlackList"),
       host="data")
def pyramid_hash(op, ctx):
    emb, space, rand = int(attr(op, "num_emb")), int(attr(op, "space_len")), int(attr(op, "rand_len"))
    layers, seed = int(attr(op, "pyramid_layer", 2)), int(attr(op, "seed", 0))
    drop = np.float32(attr(op, "drop_out_percent", 0.0))
    training = bool(attr(op, "is_training", 0))
    use_filter = bool(attr(op, "use_filter", True))
    white = use_filter and int(attr(op, "white_list_len", 0)) != 0
    black = use_filter and int(attr(op, "black_list_len", 0)) != 0
    drop_cache = {}

    def k(x, w, wl, bl, xlod):
        if not xlod:
            raise ValueError("pyramid_hash: input X=%s carries no LoD (feed a LoDTensor)" % op.input("X")[0])
        if x.dim() != 2:
            raise ValueError("pyramid_hash: X=%s must be 2-D [T, K] ids, got %s" % (op.input("X")[0], list(x.shape)))
        off = xlod[-1].to(torch.int64)
        dev = w.device
        xf, temp, words = _float_copy(x)
        seq, start, size = _terms(off.to(x.device), layers)
        nseq = off.numel() - 1
        nterm = seq.numel()
        passing = _filtered(op, (white, black), layers, xf, start, size, wl, bl) if (white or black) else None
        if training:
            keep = _kept_in_training(passing, nterm, seed, drop, drop_cache, x.device)
        else:
            keep = torch.ones(nterm, dtype=torch.bool, device=x.device) if passing is None else passing
        kept = torch.zeros(nseq, dtype=torch.int64, device=x.device).index_add_(0, seq, keep.to(torch.int64))
        rows = kept.clamp(min=1)
        out_off = torch.cat([rows.new_zeros(1), torch.cumsum(rows, 0)])
        kept_off = torch.cat([kept.new_zeros(1), torch.cumsum(kept, 0)])
        ks, kst, ksz = seq[keep], start[keep], size[keep]
        vals = w.reshape(-1)[_slots(words, kst, ksz, emb, space, rand, layers).to(dev)]
        rank = torch.arange(ks.numel(), device=x.device) - kept_off[ks]
        dest = (out_off[ks] + rank).to(dev)
        out = torch.zeros(int(out_off[-1]), emb, dtype=w.dtype, device=dev).index_copy(0, dest, vals)
        if not training:
            out = out * float(drop)
        drop_pos = torch.zeros(x.numel() * layers, 1, dtype=torch.int32, device=x.device)
        drop_pos[:nterm, 0] = keep.to(torch.int32)
        return out, temp, drop_pos, (out_off.to(dev),), (kept_off.to(x.device),)
    return k


def _float_copy(x):
    """(xf, X_Temp_Out, words): Paddle's float copy (X_Temp_Out, [T, K]) holds X's first T values in memory
    order, and the terms read only those: with K > 1 they are X.flatten()[:T] (xf), not the first column. The
    rest of it stays 0 here. words: xf's float32 bits as uint32 in int64, what XXH32 hashes."""
    t = x.shape[0]
    xf = x.reshape(-1)[:t].to(torch.float32)
    temp = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
    temp.view(-1)[:t] = xf
    words = xf.reshape(-1).view(torch.int32).to(torch.int64) & _M32
    return xf, temp, words


def _filtered(op, on, layers, xf, start, size, wl, bl):
    """Terms the white list holds and the black list does not (bloom filters in the parameters' bytes); on:
    (white list used, black list used)."""
    lists = []
    for used, t, slot in ((on[0], wl, "WhiteList"), (on[1], bl, "BlackList")):
        if used:
            if t is None:
                raise ValueError("pyramid_hash: use_filter with %s_len > 0 needs the %s input"
                                 % (slot[:5].lower() + "_list", slot))
            lists.append(BloomFilter(t.detach().cpu().numpy(), "%s=%s" % (slot, op.input(slot)[0])))
        else:
            lists.append(None)
    ids = xf.reshape(-1).cpu().numpy()
    st, sz = start.cpu().numpy(), size.cpu().numpy()
    passing = np.ones(st.shape[0], bool)
    for n in range(2, layers + 1):
        sel = np.nonzero(sz == n)[0]
        if not sel.size:
            continue
        keys = ids[st[sel, None] + np.arange(n)].astype(np.float32).view(np.uint8)    # [terms, 4n]
        if lists[0] is not None:
            passing[sel] &= lists[0].contains(keys)
        if lists[1] is not None:
            passing[sel] &= ~lists[1].contains(keys)
    return torch.from_numpy(passing).to(xf.device)


def _kept_in_training(passing, nterm, seed, drop, cache, device):
    """[nterm] bool: the terms dropout keeps, one rand_r draw per term that passes the filters (passing, or
    None: all), in term order. cache: draws -> flags (the stream restarts every run, so a count's are fixed)."""
    draws = nterm if passing is None else int(passing.sum())
    if draws not in cache:
        rv = torch.from_numpy(rand_r_stream(seed, draws).astype(np.float32))
        rate = rv / np.float32(2147483647)                   # float / RAND_MAX in float32, as Paddle
        cache[draws] = (rate >= torch.tensor(drop)).to(device)
    keep = cache[draws]
    if passing is not None:
        keep = torch.zeros(nterm, dtype=torch.bool, device=device).masked_scatter(passing, keep)
    return keep


def _slots(words, start, size, emb, space, rand, layers):
    """[terms, emb] row indices into W of the kept terms (first row `start`, `size` ids): slice j of a term is
    W[p : p + rand] with p = XXH32(term, seed=j) % space, j = 0, rand, 2 rand, ..."""
    dev = words.device
    slices = torch.arange(0, emb, rand, dtype=torch.int64, device=dev)
    pos = torch.zeros(start.numel(), slices.numel(), dtype=torch.int64, device=dev)
    for n in range(2, layers + 1):                                   # one hash per n-gram length
        sel = size == n
        if bool(sel.any()):
            win = words[start[sel].view(-1, 1) + torch.arange(n, device=dev)]
            pos[sel] = xxh32_words(win, slices) % space
    return (pos.unsqueeze(2) + torch.arange(rand, device=dev)).reshape(start.numel(), emb)
