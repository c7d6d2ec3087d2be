"""hash (xxHash64 of each row, Paddle's feature hashing), filter_by_instag (keep the instances carrying a
wanted tag), similarity_focus (greedy one-per-row-and-column mask) and random_crop."""

import numpy as np

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first

# ---- hash ------------------------------------------------------------------------------------------------

_P1, _P2, _P3, _P4, _P5 = (np.uint64(v) for v in (11400714785074694791, 14029467366897019727,
                                                   1609587929392839161, 9650029242287828579,
                                                   2870177450012600261))
_M = 0xFFFFFFFFFFFFFFFF


def _rotl(v, r):
    return (v << np.uint64(r)) | (v >> np.uint64(64 - r))


def _round(acc, lane):
    return _rotl(acc + lane * _P2, 31) * _P1


def xxh64(data, seed):
    """XXH64 of every row of `data` (uint8 [N, L]) with one seed: uint64 [N]. Rows run together."""
    n, length = data.shape
    with np.errstate(over="ignore"):
        lanes8 = data[:, :length // 8 * 8].copy().view("<u8").astype(np.uint64)   # [N, L // 8]
        s = np.uint64(seed & _M)
        pos = 0
        if length >= 32:
            v = [np.full(n, (int(s) + int(_P1) + int(_P2)) & _M, np.uint64), np.full(n, (int(s) + int(_P2)) & _M,
                                                                                   np.uint64),
                 np.full(n, s, np.uint64), np.full(n, (int(s) - int(_P1)) & _M, np.uint64)]
            while pos + 32 <= length:
                for j in range(4):
                    v[j] = _round(v[j], lanes8[:, pos // 8 + j])
                pos += 32
            h = _rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)
            for j in range(4):
                h = (h ^ _round(np.zeros(n, np.uint64), v[j])) * _P1 + _P4
        else:
            h = np.full(n, (int(s) + int(_P5)) & _M, np.uint64)
        h = h + np.uint64(length)
        while pos + 8 <= length:
            h = _rotl(h ^ _round(np.zeros(n, np.uint64), lanes8[:, pos // 8]), 27) * _P1 + _P4
            pos += 8
        if pos + 4 <= length:
            k = data[:, pos:pos + 4].copy().view("<u4").astype(np.uint64)[:, 0]
            h = _rotl(h ^ (k * _P1), 23) * _P2 + _P3
            pos += 4
        while pos < length:
            h = _rotl(h ^ (data[:, pos].astype(np.uint64) * _P5), 11) * _P1
            pos += 1
        h ^= h >> np.uint64(33)
        h *= _P2
        h ^= h >> np.uint64(29)
        h *= _P3
        h ^= h >> np.uint64(32)
    return h


def _hash_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(tuple(x.shape[:-1]) + (int(attrs.get("num_hash", 1)), 1), x.dtype, x.lod_level)}


# Out[..., i, 0] = XXH64(bytes of the row X[..., :], seed i) % mod_by, in X's integer type.
@defop("hash", infer_shape=_hash_shape, differentiable=False)
def hash_op(op, ctx):
    num_hash, mod_by = int(attr(op, "num_hash", 1)), int(attr(op, "mod_by", 100000))

    def k(x):
        if x.dtype not in (torch.int32, torch.int64):
            raise TypeError("hash: input %s must be int32 or int64, got %s" % (op.input("X")[0], x.dtype))
        rows = np.ascontiguousarray(x.detach().cpu().numpy().reshape(-1, x.shape[-1]))
        data = rows.view(np.uint8).reshape(rows.shape[0], -1)
        out = np.stack([(xxh64(data, i) % np.uint64(mod_by)).astype(np.int64) for i in range(num_hash)], 1)
        res = torch.from_numpy(out).to(device=x.device, dtype=x.dtype)
        return res.reshape(tuple(x.shape[:-1]) + (num_hash, 1))
    return k


# ---- filter_by_instag -------------------------------------------------------------------------------------

def _filter_shape(ins, attrs):
    x = first(ins, "Ins")
    return {"Out": OutMeta((-1,) + tuple(x.shape[1:]), x.dtype, 1), "LossWeight": OutMeta((-1, 1), "float32"),
            "IndexMap": OutMeta((-1, 3), "int64")}


# Instance i is X's rows i (is_lod=False) or its LoD sequence i; Ins_tag's LoD gives its tags. The instances
# with a tag in Filter_tag are kept, in order: Out (LoD: one sequence per kept instance), LossWeight 1 each,
# IndexMap rows (out start, in start, rows). None kept: Out is one row of out_val_if_empty, LossWeight 0.
@defop("filter_by_instag", inputs=("Ins", "Ins_tag", "Filter_tag"), outputs=("Out", "LossWeight", "IndexMap"),
       lod_in=("Ins", "Ins_tag"), lod_out=("Out",), infer_shape=_filter_shape, no_grad=("Ins_tag", "Filter_tag"))
def filter_by_instag(op, ctx):
    is_lod = bool(attr(op, "is_lod", True))
    empty_val = attr(op, "out_val_if_empty", 0)

    def k(x, tags, wanted, x_lod, tag_lod):
        dev = x.device
        if not tag_lod:
            raise ValueError("filter_by_instag: Ins_tag=%s needs a LoD (the tags of each instance)"
                             % op.input("Ins_tag")[0])
        toff = tag_lod[-1]
        if is_lod:
            if not x_lod:
                raise ValueError("filter_by_instag: is_lod=True but Ins=%s carries no LoD" % op.input("Ins")[0])
            xoff = x_lod[-1]
        else:
            xoff = torch.arange(x.shape[0] + 1, device=dev)
        n_inst = toff.numel() - 1
        if xoff.numel() - 1 != n_inst:
            raise ValueError("filter_by_instag: Ins=%s holds %d instances but Ins_tag=%s tags %d"
                             % (op.input("Ins")[0], xoff.numel() - 1, op.input("Ins_tag")[0], n_inst))
        hit = torch.isin(tags.reshape(-1), wanted.reshape(-1).to(tags.dtype)).to(torch.int64)
        owner = torch.repeat_interleave(torch.arange(n_inst, device=dev), toff[1:] - toff[:-1])
        keep = torch.zeros(n_inst, dtype=torch.int64, device=dev).index_add_(0, owner, hit) > 0
        lens = xoff[1:] - xoff[:-1]
        rows = torch.repeat_interleave(keep, lens)
        if not bool(keep.any()):
            out = torch.full((1,) + tuple(x.shape[1:]), float(empty_val), dtype=x.dtype, device=dev)
            out = out + 0 * x.sum()         # keeps X in the graph: its gradient is 0
            return (out, torch.zeros(1, 1, dtype=torch.float32, device=dev),
                    torch.zeros(1, 3, dtype=torch.int64, device=dev), (torch.tensor([0, 1], device=dev),))
        out = x[rows]
        klen = lens[keep]
        ooff = torch.cat([klen.new_zeros(1), torch.cumsum(klen, 0)])
        imap = torch.stack([ooff[:-1], xoff[:-1][keep], klen], 1).to(torch.int64)
        weight = torch.ones(int(keep.sum()), 1, dtype=torch.float32, device=dev)
        return out, weight, imap, (ooff,)
    return k


# ---- similarity_focus -------------------------------------------------------------------------------------

# For each sample and each index, the [A, B] slice X[n, index] (along `axis`) is scanned from its largest
# value down; a value is picked when neither its row nor its column has one yet. Out is 1 at the picked
# (row, column) positions across the whole `axis` dimension, over all indexes. Ties are broken by position.
@defop("similarity_focus", infer_shape=lambda ins, a: {"Out": OutMeta(first(ins, "X").shape,
                                                                      first(ins, "X").dtype)},
       differentiable=False)
def similarity_focus(op, ctx):
    axis = int(attr(op, "axis", 1))
    indexes = [int(i) for i in attr(op, "indexes", [])]

    def k(x):
        if x.dim() != 4 or axis not in (1, 2, 3):
            raise ValueError("similarity_focus: input %s must be 4-D and axis 1, 2 or 3 (got shape %s, axis %d)"
                             % (op.input("X")[0], list(x.shape), axis))
        xt = x.detach().movedim(axis, 1)                       # [N, K, A, B]
        if any(not 0 <= i < xt.shape[1] for i in indexes):
            raise ValueError("similarity_focus: indexes %s out of range for dimension %d of size %d"
                             % (indexes, axis, xt.shape[1]))
        m = xt[:, indexes].clone()                             # [N, I, A, B]
        n, ni, a, b = m.shape
        picked = torch.zeros(n, ni, a * b, dtype=torch.bool, device=x.device)
        flat = m.reshape(n, ni, a * b)
        neg = torch.finfo(flat.dtype).min
        for _ in range(min(a, b)):
            j = flat.argmax(2, keepdim=True)                   # [N, I, 1]
            picked.scatter_(2, j, True)
            r, c = j // b, j % b
            cols = torch.arange(a * b, device=x.device).view(1, 1, -1)
            used = (cols // b == r) | (cols % b == c)
            flat = flat.masked_fill(used, neg)
        mask = picked.reshape(n, ni, a, b).any(1, keepdim=True).to(x.dtype)     # [N, 1, A, B]
        return mask.expand(n, xt.shape[1], a, b).movedim(1, axis).contiguous()
    return k


# ---- random_crop ------------------------------------------------------------------------------------------

def _crop_shape(ins, attrs):
    x = first(ins, "X")
    shape = [int(s) for s in attrs["shape"]]
    return {"Out": OutMeta(tuple(x.shape[:len(x.shape) - len(shape)]) + tuple(shape), x.dtype),
            "SeedOut": OutMeta((1,), "int64")}


# Every instance (the leading dimensions) gets its own window of `shape` over the trailing dimensions, at
# offsets drawn uniformly. The draws come from a generator seeded once by startup_seed (or the Seed input's
# value), so a program's crops repeat from run to run of the same Executor; they are not Paddle's numbers.
# SeedOut carries the next seed, as in Paddle. No gradient, as Paddle.
@defop("random_crop", inputs=("X", "Seed"), outputs=("Out", "SeedOut"), infer_shape=_crop_shape,
       differentiable=False)
def random_crop(op, ctx):
    shape = [int(s) for s in attr(op, "shape")]
    startup_seed = int(attr(op, "startup_seed", 0) or 0)
    state = {}

    def k(x, seed):
        nd = len(shape)
        lead, tail = tuple(x.shape[:x.dim() - nd]), tuple(x.shape[x.dim() - nd:])
        if any(c > s or c <= 0 for c, s in zip(shape, tail)):
            raise ValueError("random_crop: crop shape %s does not fit the trailing dimensions %s of %s"
                             % (shape, list(tail), op.input("X")[0]))
        if "gen" not in state:
            s0 = startup_seed
            if seed is not None and seed.numel() and int(seed.reshape(-1)[0]) != 0:
                s0 = int(seed.reshape(-1)[0])
            state["gen"] = torch.Generator().manual_seed(s0 & 0x7FFFFFFFFFFFFFFF)
        gen = state["gen"]
        b = 1
        for s in lead:
            b *= s
        out = x.reshape((b,) + tail)
        for d, (c, s) in enumerate(zip(shape, tail)):
            off = torch.randint(0, s - c + 1, (b,), generator=gen).to(x.device)
            idx = off.view((b,) + (1,) * nd) + torch.arange(c, device=x.device).view(
                (1,) + (1,) * d + (c,) + (1,) * (nd - d - 1))
            idx = idx.expand((b,) + tuple(shape[:d]) + (c,) + tuple(out.shape[d + 2:]))
            out = torch.gather(out, d + 1, idx)
        nxt = torch.randint(1, 2 ** 31 - 1, (1,), generator=gen).to(device=x.device, dtype=torch.int64)
        return out.reshape(lead + tuple(shape)), nxt
    return k


# ---- one_hot (layers.one_hot) and one_hot_v2 (fluid.one_hot) ----------------------------------------------

def _one_hot_shape(v2):
    def infer(ins, attrs):
        x = first(ins, "X")
        depth = -1 if first(ins, "depth_tensor") is not None else int(attrs["depth"])
        lead = tuple(x.shape)
        if not v2 and lead and lead[-1] == 1:
            lead = lead[:-1]        # layers.one_hot: ids [.., 1] -> [.., depth]
        return {"Out": OutMeta(lead + (depth,), "float32", x.lod_level)}
    return infer


def _one_hot_kernel(op, v2):
    allow = bool(attr(op, "allow_out_of_range", False))

    def k(x, depth_t):
        depth = int(depth_t.reshape(-1)[0]) if depth_t is not None else int(attr(op, "depth"))
        idx = x.long()
        if not v2 and idx.dim() > 1 and idx.shape[-1] == 1:
            idx = idx.reshape(idx.shape[:-1])
        valid = (idx >= 0) & (idx < depth)
        if not allow and idx.numel() and not bool(valid.all()):
            raise ValueError("one_hot: ids of %s must be in [0, %d), got range [%d, %d] (set "
                             "allow_out_of_range=True for zero rows)"
                             % (op.input("X")[0], depth, int(idx.min()), int(idx.max())))
        out = torch.nn.functional.one_hot(torch.where(valid, idx, torch.zeros_like(idx)), depth)
        return out.to(torch.float32) * valid.unsqueeze(-1)
    return k


# layers.one_hot: ids [.., 1] (or [..]) -> [.., depth]; fluid.one_hot (one_hot_v2): any shape -> shape + [depth].
# Out-of-range ids give zero rows with allow_out_of_range, an error naming the input otherwise.
@defop("one_hot", inputs=("X", "depth_tensor"), infer_shape=_one_hot_shape(False), differentiable=False)
def one_hot(op, ctx):
    return _one_hot_kernel(op, False)


@defop("one_hot_v2", inputs=("X", "depth_tensor"), infer_shape=_one_hot_shape(True), differentiable=False)
def one_hot_v2(op, ctx):
    return _one_hot_kernel(op, True)
