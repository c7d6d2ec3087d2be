"""lod_tensor_to_array / array_to_lod_tensor on deeper LoDs (Paddle 1.8's general form): a rank table of level
L ranks the level-L sequences; step s of the array holds, for each sequence alive at s (rank order), its s-th
element one level down with everything nested in it, as a LoD tensor of the remaining levels.
array_to_lod_tensor puts the pieces back: the rows and every LoD level as they were (the levels above L come
from the rank table, which keeps them). The 1- and 2-level forms of a level-0 table stay in rnn_flow.py (one
gather each); this one walks the offsets in Python, for the rarely used deeper ones."""

from ...ir.lazy import torch
from .control_flow import TensorArray

__all__ = ["nested_to_array", "nested_from_array"]


def _offsets(lengths, device):
    out = [0]
    for n in lengths:
        out.append(out[-1] + n)
    return torch.tensor(out, dtype=torch.long, device=device)


def _expand(lod, units, level):
    """The rows under the units of `level` (indices into lod[level]'s sequences), and the lengths, per level
    from `level` down, of what they hold."""
    lens, cur = [], units
    for off in lod[level:]:
        lens.append([off[u + 1] - off[u] for u in cur])
        cur = [k for u in cur for k in range(off[u], off[u + 1])]
    return cur, lens


def nested_to_array(x, lod, table, level, counts):
    lod_l = [o.tolist() for o in lod]
    off = lod_l[level]
    order = table.index.tolist()
    items, lods = [], []
    for s, c in enumerate(counts):
        units = [off[i] + s for i in order[:c]]
        rows, lens = _expand(lod_l, units, level + 1)
        items.append(x.index_select(0, torch.tensor(rows, dtype=torch.long, device=x.device)))
        lods.append(tuple(_offsets(n, x.device) for n in lens) or None)
    return TensorArray(items, lods)


def _subtree(lens, e):
    """The lengths per level under entry e of a step's LoD (lens: lengths per level), and its row range."""
    lo, hi, out = e, e + 1, []
    for level in lens:
        part = level[lo:hi]
        out.append(part)
        lo, hi = sum(level[:lo]), sum(level[:lo]) + sum(part)
    return out, lo, hi


def nested_from_array(arr, lods, table, counts):
    """The LoD tensor lod_tensor_to_array cut into `arr` (steps with LoDs `lods`), with its full LoD."""
    lengths = [n for _, n in sorted(zip(table.index.tolist(), table.lengths))]   # original order
    rank = {i: r for r, i in enumerate(table.index.tolist())}
    step_lens = [[(o[1:] - o[:-1]).tolist() for o in (lods[s] or ())] for s in range(len(counts))]
    pieces, deeper = [], None
    for i, n in enumerate(lengths):
        for s in range(n):
            r = rank[i]
            sub, lo, hi = _subtree(step_lens[s], r) if step_lens[s] else ([], r, r + 1)
            pieces.append(arr[s][lo:hi])
            deeper = [[] for _ in sub] if deeper is None else deeper
            for d, part in enumerate(sub):
                deeper[d].extend(part)
    dev = table.offsets.device
    out = torch.cat(pieces, 0) if pieces else arr[0][:0]
    return out, tuple(table.coarse) + (table.offsets,) + tuple(_offsets(d, dev) for d in (deeper or []))
