"""Record-level operations of InMemoryDataset beyond shuffling: merge_by_lineid (records of one ins id
become one) and slots_shuffle (fea eval: some slots take the values of other records). Both build a new
Block from the selected values and return Rows over it.
"""

import numpy as np

from .feed import Rows
from .parse import Block

__all__ = ["slot_columns", "merge_by_ins_id", "shuffle_slots", "drop_zero_feasigns", "record_ins_ids"]


def drop_zero_feasigns(block, slots):
    """As Paddle 1.8.5's in-memory feed (MultiSlotInMemoryDataFeed) keeps a record: the lod slots lose their
    zero ids and their float values under 1e-6 in magnitude, and a slot left empty is fed as one 0.
    Dense slots keep every value; QueueDataset's feed keeps every value too."""
    for k, spec in enumerate(slots):
        if not spec.lod:
            continue
        vals, offs = block.vals[k], block.offs[k]
        keep = np.abs(vals.astype(np.float64)) >= 1e-6 if spec.dtype.kind == "f" else vals != 0
        if keep.all():
            continue
        n = len(offs) - 1
        line = np.repeat(np.arange(n), np.diff(offs))
        kept_line = line[keep]
        counts = np.maximum(np.bincount(kept_line, minlength=n), 1)
        new_offs = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=new_offs[1:])
        out = np.zeros(int(new_offs[-1]), vals.dtype)
        rank = np.arange(len(kept_line)) - np.searchsorted(kept_line, kept_line)
        out[new_offs[kept_line] + rank] = vals[keep]
        block.vals[k], block.offs[k] = out, new_offs
    return block


def slot_columns(rows, nslots):
    """[(values, offsets)] per slot for `rows`, in their order (values concatenated row after row)."""
    n = len(rows)
    out = []
    for k in range(nslots):
        sizes = [len(b.vals[k]) for b in rows.blocks]
        base = np.zeros(len(sizes) + 1, np.int64)
        np.cumsum(sizes, out=base[1:])
        allv = np.concatenate([b.vals[k] for b in rows.blocks]) if rows.blocks else np.zeros(0)
        starts = np.zeros(n, np.int64)
        lens = np.zeros(n, np.int64)
        for b in np.unique(rows.bid):
            m = rows.bid == b
            o = rows.blocks[int(b)].offs[k]
            r = rows.row[m]
            starts[m] = base[b] + o[r]
            lens[m] = o[r + 1] - o[r]
        offs = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offs[1:])
        idx = np.repeat(starts - offs[:-1], lens) + np.arange(offs[-1])
        out.append((allv[idx], offs))
    return out


def record_ins_ids(rows):
    """The ins id of each record ("" where none was parsed)."""
    ids = np.empty(len(rows), dtype=object)
    ids[:] = ""
    for b in np.unique(rows.bid):
        blk = rows.blocks[int(b)]
        if blk.ins_ids is not None:
            m = rows.bid == b
            ids[m] = blk.ins_ids[rows.row[m]]
    return ids


def _linenos(rows):
    return np.array([rows.blocks[int(b)].linenos[int(r)] for b, r in zip(rows.bid, rows.row)], np.int64)


def _block(rows, cols, ins_ids=None):
    origin = rows.blocks[0].origin if rows.blocks else "<merged>"
    return Block(origin, _linenos(rows), [v for v, _ in cols], [o for _, o in cols], ins_ids)


def merge_by_ins_id(rows, slots, merge_size, rng):
    """Rows of the merged records, in random order. As Paddle's MergeByInsId: records are grouped by ins
    id; a group whose size is not merge_size (when > 0) is dropped; a group where two records both carry
    one slot is dropped; otherwise each slot takes the values of the record that carries it. A record
    carries a dense (lod_level 0) slot always and a lod slot when it has a value other than 0 (Paddle's
    in-memory feed keeps no zero ids or values of lod slots, and feeds a lone 0 for a slot left empty)."""
    if not len(rows):
        return rows
    ids = record_ins_ids(rows)
    cols = slot_columns(rows, len(slots))
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    cuts = np.flatnonzero(sorted_ids[1:] != sorted_ids[:-1]) + 1
    keep_rows, keep_ids, merged = [], [], [[] for _ in slots]
    for group in np.split(order, cuts):
        if merge_size > 0 and len(group) != merge_size:
            continue
        picked, conflict = [], False
        for k, spec in enumerate(slots):
            vals, offs = cols[k]
            have = []
            for r in group:
                v = vals[offs[r]:offs[r + 1]]
                if spec.lod:
                    v = v[v != 0]
                    if not len(v):
                        continue
                have.append(v)
            if len(have) > 1:
                conflict = True
                break
            picked.append(have[0] if have else np.zeros(1, vals.dtype))
        if conflict:
            continue
        keep_rows.append(group[0])
        keep_ids.append(ids[group[0]])
        for k, v in enumerate(picked):
            merged[k].append(v)
    if not keep_rows:
        return Rows.concat([])
    new_cols = []
    for k, spec in enumerate(slots):
        lens = [len(v) for v in merged[k]]
        offs = np.zeros(len(lens) + 1, np.int64)
        np.cumsum(lens, out=offs[1:])
        new_cols.append((np.concatenate(merged[k]).astype(spec.dtype, copy=False), offs))
    first = rows[np.array(keep_rows, np.int64)]
    out = Rows.of(_block(first, new_cols, np.array(keep_ids, dtype=object)))
    out.shuffle(rng)
    return out


def shuffle_slots(rows, slots, names, capacity, rng):
    """Rows where the slots named in `names` of each record hold the values of a record drawn from a
    reservoir of up to `capacity` records seen so far (the record itself included), as Paddle's fea eval
    slots shuffle draws them (RecordCandidateList); the other slots are unchanged."""
    n = len(rows)
    if not n:
        return rows
    capacity = max(1, int(capacity))
    cand, pick = [], np.zeros(n, np.int64)
    for i in range(n):
        if len(cand) < capacity:
            cand.append(i)
        else:
            j = int(rng.randint(i + 1))
            if j < capacity:
                cand[j] = i
        pick[i] = cand[int(rng.randint(len(cand)))]
    own = slot_columns(rows, len(slots))
    drawn = slot_columns(rows[pick], len(slots))
    cols = [drawn[k] if s.name in names else own[k] for k, s in enumerate(slots)]
    return Rows.of(_block(rows, cols, record_ins_ids(rows)))
