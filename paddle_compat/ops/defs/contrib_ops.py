"""fluid.contrib.layers ops: partial_sum and partial_concat (columns [start_index, start_index + length) of
each 2-D input, summed or concatenated; length -1 means to the last column), fused_elemwise_activation,
rank_attention, fused_embedding_seq_pool, shuffle_batch, tdm_child, match_matrix_tensor, var_conv_2d,
tree_conv, multiclass_nms2 and sequence_topk_avg_pooling."""

import numpy as np

from ...ir import places
from ...ir.lazy import torch
from ..registry import attr, defop, OutMeta
from ..shapes import first
from .activation_ops import activation


def _span(width, attrs, op_type):
    start, length = int(attrs.get("start_index", 0)), int(attrs.get("length", -1))
    if start < 0:
        start += width
    end = width if length < 0 else start + length
    if width >= 0 and not 0 <= start < end <= width:
        raise ValueError("%s: start_index=%s, length=%s do not fit inputs of %d columns"
                         % (op_type, attrs.get("start_index", 0), attrs.get("length", -1), width))
    return start, end


def _infer(op_type, concat):
    def infer(ins, attrs):
        xs = ins["X"]
        for x in xs:
            if len(x.shape) != 2 or tuple(x.shape) != tuple(xs[0].shape):
                raise ValueError("%s: inputs must be 2-D and of one shape, got %s"
                                 % (op_type, [list(v.shape) for v in xs]))
        start, end = _span(xs[0].shape[1], attrs, op_type)
        cols = (end - start) * (len(xs) if concat else 1)
        return {"Out": OutMeta((xs[0].shape[0], cols), xs[0].dtype)}
    return infer


@defop("partial_sum", inputs=("X*",), infer_shape=_infer("partial_sum", False))
def partial_sum(op, ctx):
    attrs = {"start_index": attr(op, "start_index", 0), "length": attr(op, "length", -1)}

    def k(xs):
        start, end = _span(xs[0].shape[1], attrs, "partial_sum")
        return torch.stack([x[:, start:end] for x in xs]).sum(0)
    return k


@defop("partial_concat", inputs=("X*",), infer_shape=_infer("partial_concat", True))
def partial_concat(op, ctx):
    attrs = {"start_index": attr(op, "start_index", 0), "length": attr(op, "length", -1)}

    def k(xs):
        start, end = _span(xs[0].shape[1], attrs, "partial_concat")
        return torch.cat([x[:, start:end] for x in xs], 1)
    return k


# fused_elemwise_activation: functor_list [f1, f2]. With a binary f1: Out = f1(X, f2(Y)), IntermediateOut =
# f2(Y); with a unary f1: Out = f1(f2(X, Y)), IntermediateOut = f2(X, Y). Y broadcasts into X from `axis`.
_BINARY = {"elementwise_add": lambda a, b: a + b, "elementwise_mul": lambda a, b: a * b}
_UNARY = ("scale", "relu", "tanh", "sigmoid")     # scale: t * attr scale; the others: activation(name)


def _functors(attrs):
    fl = attrs.get("functor_list")
    if isinstance(fl, str):
        fl = fl.split(",")
    if not isinstance(fl, (list, tuple)) or len(fl) != 2:
        raise ValueError("fused_elemwise_activation: functor_list must name 2 functors, got %r" % (fl,))
    f1, f2 = fl
    if f1 in _BINARY and f2 in _UNARY or f1 in _UNARY and f2 in _BINARY:
        return f1, f2
    raise ValueError("fused_elemwise_activation: functor_list %s is not a binary/unary pair of %s and %s"
                     % (list(fl), sorted(_BINARY), sorted(_UNARY)))


def _fused_infer(ins, attrs):
    x, y = ins["X"][0], ins["Y"][0]
    f1, _ = _functors(attrs)
    inter = y if f1 in _BINARY else x
    return {"Out": OutMeta(x.shape, x.dtype, x.lod_level), "IntermediateOut": OutMeta(inter.shape, x.dtype)}


@defop("fused_elemwise_activation", inputs=("X", "Y"), outputs=("Out", "IntermediateOut"),
       infer_shape=_fused_infer)
def fused_elemwise_activation(op, ctx):
    attrs = dict(op.attrs)
    f1, f2 = _functors(attrs)
    axis, scale = int(attrs.get("axis", -1)), float(attrs.get("scale", 0.0))

    def unary(name, t):
        return t * scale if name == "scale" else activation(name)(t)

    def bcast(x, y):
        if y.dim() == x.dim():
            return y
        start = x.dim() - y.dim() if axis == -1 else axis
        return y.reshape([1] * start + list(y.shape) + [1] * (x.dim() - start - y.dim()))

    def k(x, y):
        if f1 in _BINARY:
            inter = unary(f2, y)
            return _BINARY[f1](x, bcast(x, inter)), inter
        inter = _BINARY[f2](x, bcast(x, y))
        return unary(f1, inter), inter
    return k


# rank_attention: row i of RankOffset [N, 1 + 2 MaxRank] is (rank_i, then (rank_ik, index_ik) per k); ranks are
# 1-based, < 1 (-1) means absent. RankParam [MaxRank^2 D, C] holds MaxRank^2 blocks [D, C]; block
# (rank_i - 1) MaxRank + (rank_ik - 1) maps X[index_ik] [D] for Out[i] = sum over present k of X[index_ik] @ block.
# Paddle 1.8.5 has only a GPU kernel; its RankParam gradient sends neighbour k's part to block
# (rank_i - 1, k), which is this derivative only when rank_ik = k + 1. Ours is autograd's.
def _rank_attention_shape(ins, attrs):
    x, off, p = first(ins, "X"), first(ins, "RankOffset"), first(ins, "RankParam")
    r = int(attrs.get("MaxRank", 3))
    if len(off.shape) != 2 or off.shape[1] != 1 + 2 * r:
        raise ValueError("rank_attention: RankOffset must be [N, 1 + 2 * MaxRank] = [N, %d], got %s"
                         % (1 + 2 * r, list(off.shape)))
    if x.shape[1] >= 0 and p.shape[0] != x.shape[1] * r * r:
        raise ValueError("rank_attention: RankParam must have MaxRank^2 * %d = %d rows, got %s"
                         % (x.shape[1], x.shape[1] * r * r, list(p.shape)))
    return {"Out": OutMeta((x.shape[0], p.shape[1]), x.dtype)}


@defop("rank_attention", inputs=("X", "RankOffset", "RankParam"), infer_shape=_rank_attention_shape,
       no_grad=("RankOffset",))
def rank_attention(op, ctx):
    r = int(attr(op, "MaxRank", 3))

    def k(x, offset, param):
        n, d = x.shape
        off = offset.long()
        lower = off[:, 0:1] - 1                                     # [N, 1]
        faster = off[:, 1::2] - 1                                   # [N, R]
        index = off[:, 2::2]                                        # [N, R]
        valid = (lower >= 0) & (faster >= 0)
        # (not while a CUDA graph is captured: no read back there; the indices are clamped below anyway)
        if not places.capturing(x.device) and bool((valid & ((index < 0) | (index >= n))).any()):
            raise ValueError("rank_attention: RankOffset=%s indexes rows outside X=%s's %d"
                             % (op.input("RankOffset")[0], op.input("X")[0], n))
        block = (lower * r + faster).clamp(0, r * r - 1)
        xs = x[index.clamp(0, n - 1)] * valid.unsqueeze(2).to(x.dtype)            # [N, R, D]
        blocks = param.reshape(r * r, d, -1)[block]                                # [N, R, D, C]
        return torch.einsum("nkd,nkdc->nc", xs, blocks)
    return k


def _offsets(op, lod, slot):
    if not lod:
        raise ValueError("%s: input %s=%s carries no LoD (feed a LoDTensor)" % (op.type, slot, op.input(slot)[0]))
    return lod[-1]


# ---- fused_embedding_seq_pool -----------------------------------------------------------------------------

def _fesp_shape(ins, attrs):
    ids, w = first(ins, "Ids"), first(ins, "W")
    k = ids.shape[-1] if len(ids.shape) > 1 else 1
    return {"Out": OutMeta((-1, w.shape[1] * k), w.dtype)}


# Out[i] = sum over sequence i's rows of W[id] (each of the k id columns side by side); ids equal to
# padding_idx add nothing and get no gradient. Only combiner "sum" exists (as in Paddle).
@defop("fused_embedding_seq_pool", inputs=("Ids", "W"), lod_in=("Ids",), infer_shape=_fesp_shape,
       no_grad=("Ids",))
def fused_embedding_seq_pool(op, ctx):
    pad = attr(op, "padding_idx", -1)
    pad = -1 if pad is None else int(pad)
    if attr(op, "combiner", "sum") != "sum":
        raise NotImplementedError("fused_embedding_seq_pool: only combiner='sum' exists (Paddle's too)")

    def k(ids, w, lod):
        off = _offsets(op, lod, "Ids")
        idx = ids.reshape(ids.shape[0], -1).long()
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= w.shape[0]):
            raise ValueError("fused_embedding_seq_pool: ids of %s must be in [0, %d), got [%d, %d]"
                             % (op.input("Ids")[0], w.shape[0], int(idx.min()), int(idx.max())))
        rows = w[idx]                                                   # [T, k, D]
        if pad >= 0:
            rows = rows * (idx != pad).unsqueeze(-1).to(w.dtype)
        rows = rows.reshape(idx.shape[0], -1)
        seg = torch.repeat_interleave(torch.arange(off.numel() - 1, device=w.device), off[1:] - off[:-1])
        out = torch.zeros(off.numel() - 1, rows.shape[1], dtype=w.dtype, device=w.device)
        return out.index_add(0, seg, rows)
    return k


# ---- shuffle_batch ----------------------------------------------------------------------------------------

def _shuffle_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(x.shape, x.dtype, x.lod_level), "ShuffleIdx": OutMeta((-1,), "int64"),
            "SeedOut": OutMeta((1,), "int64")}


# The rows (all dimensions but the last, flattened) in a random order; ShuffleIdx says which input row each
# output row is. Draws come from a generator seeded once by startup_seed (or Seed's value): repeatable from
# run to run, not Paddle's order. The gradient goes back to the rows' places.
@defop("shuffle_batch", inputs=("X", "Seed"), outputs=("Out", "ShuffleIdx", "SeedOut"), infer_shape=_shuffle_shape,
       no_grad=("Seed",), host="generator", random=True)
def shuffle_batch(op, ctx):
    startup = int(attr(op, "startup_seed", 0) or 0)
    state = {}

    def k(x, seed):
        if "gen" not in state:
            s0 = startup
            if seed is not None and seed.numel() and int(seed.reshape(-1)[0]) != 0:
                s0 = int(seed.reshape(-1)[0])
            state["gen"] = torch.Generator().manual_seed(s0 & 0x7FFFFFFFFFFFFFFF)
        rows = x.reshape(-1, x.shape[-1])
        perm = torch.randperm(rows.shape[0], generator=state["gen"]).to(x.device)
        nxt = torch.randint(1, 2 ** 31 - 1, (1,), generator=state["gen"]).to(x.device)
        return rows[perm].reshape(x.shape), perm, nxt
    return k


# ---- tdm_child --------------------------------------------------------------------------------------------

def _tdm_child_shape(ins, attrs):
    x = first(ins, "X")
    shape = tuple(x.shape) + (int(attrs["child_nums"]),)
    dt = {2: "int32", 3: "int64"}.get(attrs.get("dtype", 2), attrs.get("dtype", "int32"))
    return {"Child": OutMeta(shape, dt), "LeafMask": OutMeta(shape, dt)}


# TreeInfo rows: (item_id, layer_id, parent_id, child ids...). Child = the node's children (0s for node 0
# and for a node without children); LeafMask = 1 where the child is an item (item_id != 0).
@defop("tdm_child", inputs=("X", "TreeInfo"), outputs=("Child", "LeafMask"), infer_shape=_tdm_child_shape,
       differentiable=False, host="data")
def tdm_child(op, ctx):
    n_child = int(attr(op, "child_nums"))

    def k(x, tree):
        ids = x.long()
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= tree.shape[0]):
            raise ValueError("tdm_child: node ids of %s must be in [0, %d), got [%d, %d]"
                             % (op.input("X")[0], tree.shape[0], int(ids.min()), int(ids.max())))
        tree = tree.long()
        child = tree[ids][..., 3:3 + n_child]
        has = (ids != 0) & (tree[ids][..., 3] != 0)
        child = child * has.unsqueeze(-1)
        leaf = (tree[child][..., 0] != 0) & has.unsqueeze(-1)
        return child.to(x.dtype), leaf.to(x.dtype)
    return k


# ---- match_matrix_tensor ----------------------------------------------------------------------------------

def _mmt_shape(ins, attrs):
    x, w = first(ins, "X"), first(ins, "W")
    return {"Out": OutMeta((-1, 1), x.dtype, 1), "Tmp": OutMeta((-1, 1), x.dtype)}


def _padded(x, off):
    """LoD rows [T, h] -> ([B, L, h] zero-padded, [B, L] mask, lengths)."""
    lens = off[1:] - off[:-1]
    b = lens.numel()
    width = int(lens.max()) if b else 0
    steps = torch.arange(width, device=x.device)
    mask = steps.unsqueeze(0) < lens.unsqueeze(1)
    idx = (off[:-1].unsqueeze(1) + steps).clamp(max=max(x.shape[0] - 1, 0))
    rows = x[idx]
    return rows * mask.reshape(tuple(mask.shape) + (1,) * (rows.dim() - 2)).to(x.dtype), mask, lens


# Sequence pair i: Out_i[t, a, b] = x_a W[:, t, :] y_b over x's a-th and y's b-th rows, laid out as
# [dim_t, len_x_i, len_y_i] flattened, pairs one after another (Out's LoD); Tmp = X W as [T_x, dim_t * h].
@defop("match_matrix_tensor", inputs=("X", "Y", "W"), grad_lod=("X", "Y"), outputs=("Out", "Tmp"), lod_in=("X", "Y"), lod_out=("Out",),
       infer_shape=_mmt_shape)
def match_matrix_tensor(op, ctx):
    dim_t = int(attr(op, "dim_t", 1))

    def k(x, y, w, xlod, ylod):
        xo, yo = _offsets(op, xlod, "X"), _offsets(op, ylod, "Y")
        if xo.numel() != yo.numel():
            raise ValueError("match_matrix_tensor: X=%s holds %d sequences but Y=%s %d"
                             % (op.input("X")[0], xo.numel() - 1, op.input("Y")[0], yo.numel() - 1))
        h = x.shape[1]
        tmp = (x @ w.reshape(h, dim_t * h))                             # [Tx, dim_t * h]
        xp, xm, xl = _padded(tmp.reshape(-1, dim_t, h), xo)             # [B, Lx, dim_t, h]
        yp, ym, yl = _padded(y, yo)                                     # [B, Ly, h]
        full = torch.einsum("bath,bch->btac", xp, yp)                   # [B, dim_t, Lx, Ly]
        keep = (xm[:, None, :, None] & ym[:, None, None, :]).expand_as(full)
        out = full[keep].reshape(-1, 1)
        sizes = dim_t * xl * yl
        ooff = torch.cat([sizes.new_zeros(1), torch.cumsum(sizes, 0)])
        return out, tmp.reshape(-1, 1), (ooff,)
    return k


# ---- sequence_topk_avg_pooling ----------------------------------------------------------------------------

def _topk_shape(ins, attrs):
    x = first(ins, "X")
    n = int(attrs["channel_num"]) * len(attrs["topks"])
    return {"Out": OutMeta((-1, n), x.dtype, 1), "pos": OutMeta((-1, 1), "int32")}


# X holds, per sample i, a [channel_num, rows_i, cols_i] map (rows_i, cols_i from ROW's and COLUMN's LoD).
# Out row r of sample i, column c * len(topks) + j: the sum of the topks[j] largest values of channel c's
# row r divided by topks[j] (missing values count 0). pos: the positions of the max(topks) largest (-1
# where the row is shorter), as Paddle.
@defop("sequence_topk_avg_pooling", inputs=("X", "ROW", "COLUMN"), grad_lod=("X",), outputs=("Out", "pos"),
       lod_in=("X", "ROW", "COLUMN"), lod_out=("Out",), infer_shape=_topk_shape, no_grad=("ROW", "COLUMN"))
def sequence_topk_avg_pooling(op, ctx):
    topks = [int(v) for v in attr(op, "topks")]
    chans = int(attr(op, "channel_num"))

    def k(x, row, col, xlod, rlod, clod):
        xo, ro, co = _offsets(op, xlod, "X"), _offsets(op, rlod, "ROW"), _offsets(op, clod, "COLUMN")
        rows, cols = ro[1:] - ro[:-1], co[1:] - co[:-1]
        b = rows.numel()
        if not torch.equal(xo[1:] - xo[:-1], chans * rows * cols):
            raise ValueError("sequence_topk_avg_pooling: X=%s's sequences are not channel_num * rows * cols long"
                             % op.input("X")[0])
        rmax, cmax = int(rows.max()), int(cols.max())
        kmax = max(topks)
        dev = x.device
        c = torch.arange(chans, device=dev).view(1, -1, 1, 1)
        r = torch.arange(rmax, device=dev).view(1, 1, -1, 1)
        q = torch.arange(cmax, device=dev).view(1, 1, 1, -1)
        rb, cb = rows.view(-1, 1, 1, 1), cols.view(-1, 1, 1, 1)
        valid = (r < rb) & (q < cb) & (c >= 0)
        flat = xo[:-1].view(-1, 1, 1, 1) + (c * rb + r) * cb + q
        vals = x.reshape(-1)[flat.clamp(max=x.numel() - 1)]
        vals = vals.masked_fill(~valid, float("-inf"))                  # [B, C, R, Q]
        kk = min(kmax, cmax)
        top, pos = vals.topk(kk, dim=3)
        got = torch.isfinite(top)
        top = torch.where(got, top, torch.zeros_like(top))
        csum = torch.cumsum(top, 3)
        outs = [csum[..., min(t, kk) - 1] / t for t in topks]          # [B, C, R] each
        out = torch.stack(outs, 3).permute(0, 2, 1, 3).reshape(b, rmax, chans * len(topks))
        keep = torch.arange(rmax, device=dev).unsqueeze(0) < rows.unsqueeze(1)
        out = out[keep]
        pos = torch.where(got, pos, torch.full_like(pos, -1))
        if kk < kmax:
            pos = torch.cat([pos, pos.new_full(tuple(pos.shape[:3]) + (kmax - kk,), -1)], 3)
        pos = pos.permute(0, 2, 1, 3)[keep].reshape(-1, 1).to(torch.int32)
        return out, pos, (ro,)
    return k


# ---- tree_conv (TBCNN) ------------------------------------------------------------------------------------

def _tree_conv_shape(ins, attrs):
    n, w = first(ins, "NodesVector"), first(ins, "Filter")
    return {"Out": OutMeta((n.shape[0], n.shape[1], w.shape[2], w.shape[3]), n.dtype)}


def _patch_weights(edges, n_nodes, max_depth):
    """[3, N, N] continuous-binary-tree weights (left, right, top) of every node (row: the patch's root,
    1-based node r at row r - 1) over the nodes of its patch: the root and its descendants less than
    max_depth below it. A node at depth d, child i (1-based) of p children: top = (max_depth - d) / max_depth,
    left = (1 - top) * ((i - 1) / (p - 1), or 1/2 for an only child), right = (1 - top) * (1 - left)."""
    kids = {}
    count = 1
    for u, v in edges:
        if u == 0 or v == 0:
            break           # the edge list ends at the first (0, 0)
        kids.setdefault(int(u), []).append(int(v))
        count += 1
    a = np.zeros((3, n_nodes, n_nodes), np.float64)
    # Rows past the tree's edges + 1 nodes stay 0 (Paddle leaves there whatever the previous sample wrote).
    for root in range(1, min(count, n_nodes) + 1):
        todo = [(root, 1, 1, 0)]
        seen = {root}
        while todo:
            node, idx, sibs, depth = todo.pop()
            top = (max_depth - depth) / float(max_depth)
            left = (1.0 - top) * (0.5 if sibs == 1 else (idx - 1.0) / (sibs - 1.0))
            right = (1.0 - top) * (1.0 - left)
            if node - 1 < n_nodes:
                a[:, root - 1, node - 1] += (left, right, top)
            ch = kids.get(node, [])
            for i, v in enumerate(ch):
                if v not in seen and depth + 1 < max_depth:
                    seen.add(v)
                    todo.append((v, i + 1, len(ch), depth + 1))
    return a


# Out[b, r] = sum over r's patch of (left, right, top) weights x node features, times Filter [F, 3, out, k].
# The gradient for NodesVector is Paddle 1.8.5's, kept for parity: its backward reads Filter as if its
# (3, out * k) part were laid out (out * k, 3), which is the true gradient only when out * k == 1.
@defop("tree_conv", inputs=("NodesVector", "EdgeSet", "Filter"), infer_shape=_tree_conv_shape, no_grad=("EdgeSet",),
       host="reads")
def tree_conv(op, ctx):
    max_depth = int(attr(op, "max_depth", 2))

    class _TreeConv(torch.autograd.Function):
        @staticmethod
        def forward(fctx, nodes, w, a):
            patch = torch.einsum("bkrn,bnf->brfk", a, nodes)                            # [B, N, F, 3]
            fctx.save_for_backward(patch, w, a)
            return torch.einsum("brfk,fkoc->broc", patch, w)

        @staticmethod
        def backward(fctx, g):
            patch, w, a = fctx.saved_tensors
            b, n = g.shape[0], g.shape[1]
            f = w.shape[0]
            gw = torch.einsum("brfk,broc->fkoc", patch, g)
            gf = g.reshape(b, n, -1)
            col = torch.einsum("bepn,bpi->bnie", a, gf).reshape(b, n, -1)
            return col @ w.reshape(f, -1).t(), gw, None

    def k(nodes, edges, w):
        b, n, f = nodes.shape
        e = edges.detach().cpu().numpy().astype(np.int64)
        a = np.stack([_patch_weights(e[i], n, max_depth) for i in range(b)])          # [B, 3, N, N]
        a = torch.from_numpy(a).to(device=nodes.device, dtype=nodes.dtype)
        return _TreeConv.apply(nodes, w, a)
    return k


# ---- var_conv_2d ------------------------------------------------------------------------------------------

def _var_conv_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta((-1, 1), x.dtype, 1), "Col": OutMeta((-1, 1), x.dtype)}


# Sample i of X is an [InputChannel, rows_i, cols_i] map (sizes from ROW's and COLUMN's LoD), convolved with
# W [OutputChannel, InputChannel * KernelH * KernelW] centred (kernel // 2 zeros around), stride StrideH/W:
# [OutputChannel, (rows_i - 1) // StrideH + 1, (cols_i - 1) // StrideW + 1], flattened one after another.
# All samples run as one zero-padded batch. Col (Paddle's im2col buffer) is left empty here.
@defop("var_conv_2d", inputs=("X", "ROW", "COLUMN", "W"), grad_lod=("X",), outputs=("Out", "Col"), lod_in=("X", "ROW", "COLUMN"),
       lod_out=("Out",), infer_shape=_var_conv_shape, no_grad=("ROW", "COLUMN"))
def var_conv_2d(op, ctx):
    cin, cout = int(attr(op, "InputChannel")), int(attr(op, "OutputChannel"))
    kh, kw = int(attr(op, "KernelH")), int(attr(op, "KernelW"))
    sh, sw = int(attr(op, "StrideH", 1)), int(attr(op, "StrideW", 1))

    def k(x, row, col, w, xlod, rlod, clod):
        xo, ro, co = _offsets(op, xlod, "X"), _offsets(op, rlod, "ROW"), _offsets(op, clod, "COLUMN")
        rows, cols = ro[1:] - ro[:-1], co[1:] - co[:-1]
        if not torch.equal(xo[1:] - xo[:-1], cin * rows * cols):
            raise ValueError("var_conv_2d: X=%s's sequences are not InputChannel * rows * cols long"
                             % op.input("X")[0])
        b = rows.numel()
        hmax, wmax = int(rows.max()), int(cols.max())
        dev = x.device
        c = torch.arange(cin, device=dev).view(1, -1, 1, 1)
        r = torch.arange(hmax, device=dev).view(1, 1, -1, 1)
        q = torch.arange(wmax, device=dev).view(1, 1, 1, -1)
        rb, cb = rows.view(-1, 1, 1, 1), cols.view(-1, 1, 1, 1)
        valid = (r < rb) & (q < cb) & (c >= 0)
        flat = (xo[:-1].view(-1, 1, 1, 1) + (c * rb + r) * cb + q).clamp(max=max(x.numel() - 1, 0))
        img = x.reshape(-1)[flat] * valid.to(x.dtype)                   # [B, C, Hmax, Wmax]
        oh, ow = (rows - 1) // sh + 1, (cols - 1) // sw + 1
        ohm, owm = int(oh.max()), int(ow.max())
        # output (y, x) reads rows y * sh + ky - kh // 2: pad kh // 2 on top, enough below for ohm rows
        pad_b = max((ohm - 1) * sh + kh - kh // 2 - hmax, 0)
        pad_r = max((owm - 1) * sw + kw - kw // 2 - wmax, 0)
        img = torch.nn.functional.pad(img, (kw // 2, pad_r, kh // 2, pad_b))
        out = torch.nn.functional.conv2d(img, w.reshape(cout, cin, kh, kw), stride=(sh, sw))[:, :, :ohm, :owm]
        oc = torch.arange(cout, device=dev).view(1, -1, 1, 1)
        oy = torch.arange(ohm, device=dev).view(1, 1, -1, 1)
        ox = torch.arange(owm, device=dev).view(1, 1, 1, -1)
        keep = (oy < oh.view(-1, 1, 1, 1)) & (ox < ow.view(-1, 1, 1, 1)) & (oc >= 0)
        res = out[keep].reshape(-1, 1)
        sizes = cout * oh * ow
        ooff = torch.cat([sizes.new_zeros(1), torch.cumsum(sizes, 0)])
        return res, x.new_zeros((0, 1)), (ooff,)
    return k


# ---- multiclass_nms2 --------------------------------------------------------------------------------------

def _nms_shape(ins, attrs):
    b = first(ins, "BBoxes")
    return {"Out": OutMeta((-1, 6), b.dtype, 1), "Index": OutMeta((-1, 1), "int32", 1)}


def _iou(a, b, normalized):
    """Pairwise IoU of [.., K, 4] boxes -> [.., K, K]; pixel boxes (normalized=False) count both ends (+1)."""
    one = 0.0 if normalized else 1.0
    x1 = torch.maximum(a[..., :, None, 0], b[..., None, :, 0])
    y1 = torch.maximum(a[..., :, None, 1], b[..., None, :, 1])
    x2 = torch.minimum(a[..., :, None, 2], b[..., None, :, 2])
    y2 = torch.minimum(a[..., :, None, 3], b[..., None, :, 3])
    inter = (x2 - x1 + one).clamp(min=0) * (y2 - y1 + one).clamp(min=0)
    inter = torch.where((x2 < x1) | (y2 < y1), torch.zeros_like(inter), inter)

    def area(t):
        ar = (t[..., 2] - t[..., 0] + one) * (t[..., 3] - t[..., 1] + one)
        return torch.where((t[..., 2] < t[..., 0]) | (t[..., 3] < t[..., 1]), torch.zeros_like(ar), ar)
    union = area(a)[..., :, None] + area(b)[..., None, :] - inter
    return torch.where(union > 0, inter / union.clamp(min=1e-20), torch.zeros_like(inter))


# Per image and class (not background_label): boxes scoring above score_threshold, best first (at most
# nms_top_k), greedily kept unless their IoU with a kept box exceeds the threshold (which shrinks by nms_eta
# after each kept box while above 0.5); then the keep_top_k best of the image. Rows: (label, score, box),
# by label, then score; Index: image * num_boxes + box. All images and classes run together, one step per
# candidate rank.
@defop("multiclass_nms2", inputs=("BBoxes", "Scores"), outputs=("Out", "Index"), lod_out=("Out", "Index"),
       infer_shape=_nms_shape,
       differentiable=False, host="data")
def multiclass_nms2(op, ctx):
    bg = int(attr(op, "background_label", 0))
    thr_score = float(attr(op, "score_threshold"))
    top_k = int(attr(op, "nms_top_k", -1))
    keep_k = int(attr(op, "keep_top_k", -1))
    thr_nms = float(attr(op, "nms_threshold", 0.3))
    eta = float(attr(op, "nms_eta", 1.0))
    normalized = bool(attr(op, "normalized", True))

    def k(boxes, scores):
        if boxes.dim() != 3 or scores.dim() != 3:
            raise NotImplementedError("multiclass_nms2: only BBoxes [N, M, 4] with Scores [N, C, M] are supported "
                                      "(got %s and %s)" % (list(boxes.shape), list(scores.shape)))
        n, c, m = scores.shape
        dev = scores.device
        cand = scores > thr_score
        if 0 <= bg < c:
            cand[:, bg] = False
        masked = scores.masked_fill(~cand, float("-inf"))
        order = torch.sort(masked, dim=2, descending=True, stable=True).indices
        kk = m if top_k < 0 else min(top_k, m)
        order = order[..., :kk]                                             # [N, C, K]
        valid = torch.gather(cand, 2, order)
        sc = torch.gather(scores, 2, order)
        bx = torch.gather(boxes.unsqueeze(1).expand(n, c, m, 4), 2, order.unsqueeze(-1).expand(n, c, kk, 4))
        iou = _iou(bx, bx, normalized)                                      # [N, C, K, K]
        kept = torch.zeros_like(valid)
        thr = torch.full((n, c), thr_nms, dtype=scores.dtype, device=dev)
        for i in range(kk):
            sup = (kept[..., :i] & (iou[..., i, :i] > thr.unsqueeze(-1))).any(-1)
            ki = valid[..., i] & ~sup
            kept[..., i] = ki
            if eta < 1.0:
                thr = torch.where(ki & (thr > 0.5), thr * eta, thr)
        # keep_top_k best of each image (ties: lower class, then better rank)
        flat_sc = sc.masked_fill(~kept, float("-inf")).reshape(n, c * kk)
        if keep_k > -1 and keep_k < c * kk:
            best = torch.sort(flat_sc, dim=1, descending=True, stable=True).indices[:, :keep_k]
            sel = torch.zeros_like(kept.reshape(n, -1)).scatter_(1, best, True).reshape(n, c, kk) & kept
        else:
            sel = kept
        label = torch.arange(c, device=dev).view(1, c, 1).expand(n, c, kk)
        img = torch.arange(n, device=dev).view(n, 1, 1).expand(n, c, kk)
        rows = torch.cat([label.unsqueeze(-1).to(scores.dtype), sc.unsqueeze(-1), bx], -1)[sel]   # image, label, rank
        index = (img * m + order)[sel].reshape(-1, 1).to(torch.int32)
        counts = sel.reshape(n, -1).sum(1)
        off = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
        return rows, index, (off,), (off,)
    return k
