"""The ops Paddle 1.8 lowers DynamicRNN, StaticRNN and IfElse to: lod_rank_table, max_sequence_len,
lod_tensor_to_array, array_to_lod_tensor, shrink_rnn_memory, reorder_lod_tensor_by_rank, split_lod_tensor,
merge_lod_tensor, recurrent (with its sub-block), rnn_memory_helper (tensor_array_to_tensor is in control_flow.py).

A rank table is a `RankTable` value: the sequences of a level-1 LoD sorted by length, longest first (ties keep
their order, as Paddle's sort does on the small batches it is used with). DynamicRNN's step t then sees the
first count(length > t) sequences of that order, so shrinking a memory is a row prefix. Every kernel is one
gather/scatter over all rows; gradients come from autograd.
"""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first, same_as
from .control_flow import TensorArray
from .rnn_flow_nested import nested_from_array, nested_to_array


class RankTable:
    """Sequences sorted by length (descending): `index` [N] original positions, `lengths` (Python ints),
    with the LoD and variable name it was built from (for error messages)."""
    __slots__ = ("index", "lengths", "offsets", "name", "level", "coarse")

    def __init__(self, index, lengths, offsets, name, level=0, coarse=()):
        self.index, self.lengths, self.offsets, self.name = index, lengths, offsets, name
        # a table of level L > 0 ranks the level-L sequences; `coarse` keeps the levels above (Paddle's
        # coarse_lod), which array_to_lod_tensor gives its output back
        self.level, self.coarse = level, tuple(coarse)

    def count(self, t):
        """Sequences longer than t (the rows alive at step t)."""
        return sum(1 for n in self.lengths if n > t)

    def lod_text(self):
        return [self.offsets.tolist()]

    def items(self):
        """Paddle's LoDRankTable.items(): (original index, length) of each sequence, longest first."""
        return list(zip(self.index.tolist(), self.lengths))


def _level1(op, slot, lod, what, max_levels=1):
    name = op.input(slot)[0]
    if not lod:
        raise ValueError("%s: %s=%s carries no LoD (feed a LoDTensor with sequence lengths to a variable "
                         "declared with lod_level=1)" % (what, slot, name))
    if len(lod) > max_levels:
        raise NotImplementedError("%s: %s=%s has a %d-level LoD; at most %d supported"
                                  % (what, slot, name, len(lod), max_levels))
    return lod[0]


def _table(op, t, what):
    if not isinstance(t, RankTable):
        raise ValueError("%s: RankTable=%s holds no rank table (build it with lod_rank_table)"
                         % (what, op.input("RankTable")[0]))
    return t


@defop("lod_rank_table", lod_in=("X",), differentiable=False, host="array", operator_base=True)
def lod_rank_table(op, ctx):
    level = int(attr(op, "level", 0))
    name = op.input("X")[0]

    def k(x, lod):
        if level:   # a table of a deeper level ranks those sequences (lod_tensor_to_array reads it)
            if not lod or len(lod) <= level:
                raise ValueError("lod_rank_table: X=%s has a %d-level LoD; level=%d needs more"
                                 % (name, len(lod or []), level))
            off = lod[level]
        else:
            off = _level1(op, "X", lod, "lod_rank_table", len(lod or ()))
        lengths = (off[1:] - off[:-1]).tolist()
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])    # stable: ties keep their order
        return RankTable(torch.tensor(order, dtype=torch.long, device=off.device), [lengths[i] for i in order],
                         off, name, level, lod[:level] if level else ())

    return k


@defop("max_sequence_len", inputs=("RankTable",), differentiable=False,
       infer_shape=lambda ins, a: {"Out": OutMeta([1], "int64")}, host="array", operator_base=True)
def max_sequence_len(op, ctx):
    dev = ctx.device

    def k(t):
        t = _table(op, t, "max_sequence_len")
        return torch.tensor([t.lengths[0] if t.lengths else 0], dtype=torch.int64, device=dev)

    return k


def _check_same_lod(op, off, t, what):
    if off.numel() != t.offsets.numel() or not torch.equal(off, t.offsets):
        raise ValueError("%s: X=%s has LoD %s but the rank table %s was built from %s with LoD %s; every step "
                         "input of one DynamicRNN needs the same LoD"
                         % (what, op.input("X")[0], [off.tolist()], op.input("RankTable")[0], t.name,
                            t.lod_text()))


def _step_rows(t):
    """Rows of each step (the sequences alive at it), for every step of the longest sequence."""
    return [t.count(s) for s in range(t.lengths[0] if t.lengths else 0)]


@defop("lod_tensor_to_array", inputs=("X", "RankTable"), lod_in=("X",), grad_lod=("X",), no_grad=("RankTable",),
       host="array", operator_base=True)
def lod_tensor_to_array(op, ctx):
    def k(x, t, lod):
        t = _table(op, t, "lod_tensor_to_array")
        if t.level or (lod and len(lod) > 2):   # a deeper table or LoD: the general walk
            if not lod or len(lod) <= t.level:
                raise ValueError("lod_tensor_to_array: X=%s has a %d-level LoD; the rank table %s is of level %d"
                                 % (op.input("X")[0], len(lod or []), op.input("RankTable")[0], t.level))
            _check_same_lod(op, lod[t.level], t, "lod_tensor_to_array")
            counts = _step_rows(t)
            return nested_to_array(x, lod, t, t.level, counts) if counts else []
        off = _level1(op, "X", lod, "lod_tensor_to_array", 2)
        _check_same_lod(op, off, t, "lod_tensor_to_array")
        counts = _step_rows(t)
        if not counts:
            return []
        starts = off.index_select(0, t.index)                                  # [N] in rank order
        rows = torch.cat([starts[:c] + s for s, c in enumerate(counts)])      # step-major
        if len(lod) == 1:
            return list(torch.split(x.index_select(0, rows), counts, 0))
        # 2-level LoD: `rows` are sub-sequences; step s holds the s-th sub-sequence of each live sequence, as
        # a 1-level LoD tensor (Paddle's lod_tensor_to_array below the rank table's level)
        sub = lod[1]
        sub_len = (sub[1:] - sub[:-1]).index_select(0, rows)
        seq = torch.repeat_interleave(torch.arange(rows.numel(), device=sub.device), sub_len)
        base = torch.cat([sub_len.new_zeros(1), sub_len.cumsum(0)])
        flat = sub.index_select(0, rows).index_select(0, seq) + \
            torch.arange(int(base[-1]), device=sub.device) - base[:-1].index_select(0, seq)
        lens = torch.split(sub_len, counts, 0)
        items = list(torch.split(x.index_select(0, flat), [int(n.sum()) for n in lens], 0))
        return TensorArray(items, [(torch.cat([n.new_zeros(1), n.cumsum(0)]),) for n in lens])

    return k


@defop("array_to_lod_tensor", inputs=("X", "RankTable"), lod_out=("Out",), no_grad=("RankTable",),
       host="array", operator_base=True)
def array_to_lod_tensor(op, ctx):
    aname = op.input("X")[0]

    def k(arr, t):
        t = _table(op, t, "array_to_lod_tensor")
        counts = _step_rows(t)
        arr = arr or []
        lods = list(getattr(arr, "lods", None) or [])[:len(counts)]
        if counts and (t.level or any(lo is not None and len(lo) > 1 for lo in lods)):
            if len(arr) < len(counts) or any(a is None for a in arr[:len(counts)]):
                raise ValueError("array_to_lod_tensor: array X=%s has %d steps written but the rank table %s "
                                 "needs %d" % (aname, sum(a is not None for a in arr), op.input("RankTable")[0],
                                               len(counts)))
            return nested_from_array(arr, lods + [None] * (len(counts) - len(lods)), t, counts)
        if lods and len(lods) == len(counts) and all(lods):
            return _nested_to_lod_tensor(arr, lods, t, counts)
        if len(arr) < len(counts) or any(a is None for a in arr[:len(counts)]):
            raise ValueError("array_to_lod_tensor: array X=%s has %d steps written but the rank table %s "
                             "needs %d" % (aname, sum(a is not None for a in arr), op.input("RankTable")[0],
                                           len(counts)))
        for s, c in enumerate(counts):
            if arr[s].shape[0] != c:
                raise ValueError("array_to_lod_tensor: step %d of array X=%s has %d rows, the rank table %s "
                                 "has %d sequences alive at that step" % (s, aname, arr[s].shape[0],
                                                                          op.input("RankTable")[0], c))
        off = t.offsets
        if not counts:
            return arr[0][:0] if arr else torch.zeros(0, device=off.device), (off,)
        block = torch.cat(arr[:len(counts)], 0)
        # position in `block` of row r of (original) sequence i = step_base[r] + rank(i)
        step_base = torch.tensor([0] + counts[:-1], dtype=torch.long, device=off.device).cumsum(0)
        rank = torch.empty_like(t.index)
        rank[t.index] = torch.arange(t.index.numel(), device=off.device)
        lengths = off[1:] - off[:-1]
        seq = torch.repeat_interleave(torch.arange(lengths.numel(), device=off.device), lengths)
        pos_in_seq = torch.arange(int(off[-1]), device=off.device) - off[:-1].index_select(0, seq)
        return block.index_select(0, step_base.index_select(0, pos_in_seq) + rank.index_select(0, seq)), (off,)

    return k


def _nested_to_lod_tensor(arr, lods, t, counts):
    """array_to_lod_tensor of steps that are 1-level LoD tensors (one sub-sequence per live sequence): the
    result has a 2-level LoD, sequences of their sub-sequences in the original order."""
    off = t.offsets
    for s, c in enumerate(counts):
        if lods[s][0].numel() - 1 != c:
            raise ValueError("array_to_lod_tensor: step %d holds %d sub-sequences, the rank table has %d "
                             "sequences alive at that step" % (s, lods[s][0].numel() - 1, c))
    sub_len = torch.cat([l[0][1:] - l[0][:-1] for l in lods[:len(counts)]])   # block order (step-major)
    block = torch.cat(arr[:len(counts)], 0)
    step_base = torch.tensor([0] + counts[:-1], dtype=torch.long, device=off.device).cumsum(0)
    rank = torch.empty_like(t.index)
    rank[t.index] = torch.arange(t.index.numel(), device=off.device)
    lengths = off[1:] - off[:-1]
    seq = torch.repeat_interleave(torch.arange(lengths.numel(), device=off.device), lengths)
    pos_in_seq = torch.arange(int(off[-1]), device=off.device) - off[:-1].index_select(0, seq)
    subs = step_base.index_select(0, pos_in_seq) + rank.index_select(0, seq)   # block sub-sequence per output one
    sub_start = torch.cat([sub_len.new_zeros(1), sub_len.cumsum(0)])
    out_len = sub_len.index_select(0, subs)
    out_off = torch.cat([out_len.new_zeros(1), out_len.cumsum(0)])
    owner = torch.repeat_interleave(torch.arange(subs.numel(), device=off.device), out_len)
    rows = sub_start.index_select(0, subs).index_select(0, owner) + \
        torch.arange(int(out_off[-1]), device=off.device) - out_off[:-1].index_select(0, owner)
    return block.index_select(0, rows), (off, out_off)


# With a LoD (a static input), the live sequences are whole level-0 sequences: their rows and a cut LoD.
@defop("shrink_rnn_memory", inputs=("X", "I", "RankTable"), no_grad=("I", "RankTable"), lod_in=("X",),
       lod_out=("Out",), infer_shape=same_as("X"), host="array", operator_base=True)
def shrink_rnn_memory(op, ctx):
    iname = op.input("I")[0]

    def k(x, i, t, lod):
        t = _table(op, t, "shrink_memory")
        if i is None or i.numel() != 1:
            raise ValueError("shrink_memory: index I=%s must hold one integer" % iname)
        n = t.count(int(i.reshape(()).item()))
        if lod:
            if len(lod) > 1:
                raise NotImplementedError("shrink_memory: X=%s has a %d-level LoD; at most 1 supported"
                                          % (op.input("X")[0], len(lod)))
            if n > lod[0].numel() - 1:
                raise ValueError("shrink_memory: X=%s has %d sequences but %d of the rank table %s are alive"
                                 % (op.input("X")[0], lod[0].numel() - 1, n, op.input("RankTable")[0]))
            off = lod[0][:n + 1]
            return x[:int(off[-1])], (off,)
        if n > x.shape[0]:
            raise ValueError("shrink_memory: X=%s has %d rows but %d sequences of the rank table %s are alive "
                             "at step %d" % (op.input("X")[0], x.shape[0], n, op.input("RankTable")[0],
                                             int(i.reshape(()).item())))
        return x[:n], None

    return k


@defop("reorder_lod_tensor_by_rank", inputs=("X", "RankTable"), lod_in=("X",), grad_lod=(("X", "X", "Out@GRAD"),), lod_out=("Out",),
       no_grad=("RankTable",), infer_shape=same_as("X"), host="array", operator_base=True)
def reorder_lod_tensor_by_rank(op, ctx):
    def k(x, t, lod):
        t = _table(op, t, "reorder_lod_tensor_by_rank")
        n = t.index.numel()
        if not lod:   # one row per sequence
            if x.shape[0] != n:
                raise ValueError("reorder_lod_tensor_by_rank: X=%s has %d rows but the rank table %s (from %s, "
                                 "LoD %s) has %d sequences" % (op.input("X")[0], x.shape[0],
                                                               op.input("RankTable")[0], t.name, t.lod_text(), n))
            return x.index_select(0, t.index), None
        off = _level1(op, "X", lod, "reorder_lod_tensor_by_rank")
        if off.numel() - 1 != n:
            raise ValueError("reorder_lod_tensor_by_rank: X=%s has LoD %s (%d sequences) but the rank table %s "
                             "(from %s, LoD %s) has %d" % (op.input("X")[0], [off.tolist()], off.numel() - 1,
                                                           op.input("RankTable")[0], t.name, t.lod_text(), n))
        lengths = (off[1:] - off[:-1]).index_select(0, t.index)
        starts = off[:-1].index_select(0, t.index)
        seq = torch.repeat_interleave(torch.arange(n, device=off.device), lengths)
        new_off = torch.cat([off[:1] * 0, lengths.cumsum(0)])
        rows = starts.index_select(0, seq) + torch.arange(int(off[-1]), device=off.device) - \
            new_off[:-1].index_select(0, seq)
        return x.index_select(0, rows), (new_off,)

    return k


# ---- IfElse ---------------------------------------------------------------------------------------

def _row_mask(op, x, mask, lod, what):
    """Per-row bool mask of x (level 0: a LoD input is split by whole sequences)."""
    m = mask.reshape(-1).to(torch.bool)
    n = x.shape[0] if not lod else lod[0].numel() - 1
    if m.numel() != n:
        raise ValueError("%s: Mask=%s has %d entries but X=%s has %d %s" % (
            what, op.input("Mask")[0], m.numel(), op.input("X")[0], n, "sequences" if lod else "rows"))
    if not lod:
        return m, None
    off = lod[0]
    return torch.repeat_interleave(m, off[1:] - off[:-1]), off


def _sub_lod(off, m):
    lengths = (off[1:] - off[:-1])[m]
    return (torch.cat([off[:1] * 0, lengths.cumsum(0)]),)


@defop("split_lod_tensor", inputs=("X", "Mask"), outputs=("OutTrue", "OutFalse"), lod_in=("X",),
       lod_out=("OutTrue", "OutFalse"), no_grad=("Mask",),
       infer_shape=lambda ins, a: {s: OutMeta(first(ins, "X").shape, first(ins, "X").dtype,
                                              first(ins, "X").lod_level) for s in ("OutTrue", "OutFalse")},
       host="control", operator_base=True)
def split_lod_tensor(op, ctx):
    if attr(op, "level", 0) != 0:
        raise NotImplementedError("split_lod_tensor: level=%r; only level 0 is supported" % attr(op, "level"))

    def k(x, mask, lod):
        rows, off = _row_mask(op, x, mask, lod, "split_lod_tensor")
        t, f = x[rows], x[~rows]
        if off is None:
            return t, f, None, None
        m = mask.reshape(-1).to(torch.bool)
        return t, f, _sub_lod(off, m), _sub_lod(off, ~m)

    return k


@defop("merge_lod_tensor", inputs=("X", "Mask", "InTrue", "InFalse"), lod_in=("X",), lod_out=("Out",),
       no_grad=("X", "Mask"),
       infer_shape=lambda ins, a: {"Out": OutMeta(first(ins, "InTrue").shape, first(ins, "InTrue").dtype,
                                                  first(ins, "X").lod_level)}, host="control", operator_base=True)
def merge_lod_tensor(op, ctx):
    if attr(op, "level", 0) != 0:
        raise NotImplementedError("merge_lod_tensor: level=%r; only level 0 is supported" % attr(op, "level"))

    def k(x, mask, t, f, lod):
        rows, off = _row_mask(op, x, mask, lod, "merge_lod_tensor")
        n_true = int(rows.sum())
        ref = t if t is not None else f
        for name, v, want in (("InTrue", t, n_true), ("InFalse", f, rows.numel() - n_true)):
            got = 0 if v is None else v.shape[0]
            if got != want:
                raise ValueError("merge_lod_tensor: %s=%s has %d rows but Mask=%s selects %d"
                                 % (name, op.input(name)[0], got, op.input("Mask")[0], want))
        pos_t = torch.nonzero(rows).reshape(-1)
        pos_f = torch.nonzero(~rows).reshape(-1)
        parts, pos = [], []
        for v, p in ((t, pos_t), (f, pos_f)):
            if v is not None and v.shape[0]:
                parts.append(v)
                pos.append(p)
        out = ref.new_zeros((rows.numel(),) + tuple(ref.shape[1:]))
        if parts:
            out = out.index_copy(0, torch.cat(pos), torch.cat(parts, 0))
        return out, (None if off is None else (off,))

    return k


# ---- StaticRNN -----------------------------------------------------------------------------------

@defop("rnn_memory_helper", infer_shape=same_as("X"), host="array", operator_base=True)
def rnn_memory_helper(op, ctx):
    return lambda x: x


# Paddle's recurrent op: `inputs` are [T, ...] sequences sliced along dim 0 (the sub-block sees step t under
# the same name), ex_states/states name a memory before and after a step (initial_states before step 0),
# `outputs` are the sub-block variables of the same names, stacked over the steps.
@defop("recurrent", inputs=("inputs*", "initial_states*", "parameters*"), outputs=("outputs*", "step_scopes"),
       host="control", operator_base=True)
def recurrent(op, ctx):
    ins, params, outs = op.input("inputs"), op.input("parameters"), op.output("outputs")
    ex_states, states = list(attr(op, "ex_states", [])), list(attr(op, "states", []))
    init_names = op.input("initial_states")
    if len(ex_states) != len(states) or len(init_names) != len(states):
        raise ValueError("recurrent: %d initial_states, %d ex_states and %d states must match"
                         % (len(init_names), len(ex_states), len(states)))
    reverse = attr(op, "reverse", False)
    feed = ins + ex_states + params
    fetch = states + outs
    body = ctx.lower_sub_block(attr(op, "sub_block").idx, feed, fetch)

    def k(xs, inits, ps):
        if not xs:
            raise ValueError("recurrent: the StaticRNN has no step_input")
        steps = xs[0].shape[0]
        for n, x in zip(ins, xs):
            if x.shape[0] != steps:
                raise ValueError("recurrent: step input %s has %d steps but %s has %d (StaticRNN inputs need "
                                 "the same length)" % (n, x.shape[0], ins[0], steps))
        mem = list(inits)
        per_step = [[] for _ in outs]
        order = range(steps - 1, -1, -1) if reverse else range(steps)
        for t in order:
            res = body([x[t] for x in xs] + mem + list(ps))
            mem = [r[0] for r in res[:len(states)]]
            for j, r in enumerate(res[len(states):]):
                per_step[j].append(r[0])
        if reverse:
            per_step = [p[::-1] for p in per_step]
        return [torch.stack(p, 0) for p in per_step], None

    return k
