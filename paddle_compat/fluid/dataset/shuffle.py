"""InMemoryDataset.global_shuffle across trainers: records sent to random trainers, as Paddle 1.8 does.

Each trainer picks a destination trainer for each of its records (uniformly at random), sends every other
trainer its share and keeps its own, then shuffles what it holds. The records travel as an .npz of their
columns (per slot the values and offsets, and the file line numbers that errors cite), loaded with
allow_pickle=False: nothing a peer sends is unpickled. The transport is the pserver job's
(backends/ps/exchange.py), loaded only when a job has several trainers.
"""

import io
import zlib

import numpy as np

from ...backends.ps.exchange import TrainerExchange
from .feed import Block, Rows


def encode(rows, nslots):
    """Rows -> bytes (one Block holding just these records)."""
    groups = rows.groups()
    arrays = {"linenos": np.concatenate([b.linenos[r] for b, r in groups]) if groups else np.zeros(0, np.int64),
              "origin": np.frombuffer(";".join(sorted({b.origin for b, _ in groups})).encode(), np.uint8)}
    for k in range(nslots):
        vals, lens = [], []
        for b, r in groups:
            o = b.offs[k]
            starts, ln = o[r], o[r + 1] - o[r]
            idx = np.repeat(starts, ln) + (np.arange(ln.sum()) - np.repeat(np.cumsum(ln) - ln, ln))
            vals.append(b.vals[k][idx])
            lens.append(ln)
        lens = np.concatenate(lens) if lens else np.zeros(0, np.int64)
        offs = np.zeros(len(lens) + 1, np.int64)
        np.cumsum(lens, out=offs[1:])
        arrays["v%d" % k] = np.concatenate(vals) if vals else np.zeros(0)
        arrays["o%d" % k] = offs
    if any(b.ins_ids is not None for b, _ in groups):   # as str: loaded without pickle
        arrays["ins_ids"] = np.array([str(i) for b, r in groups for i in
                                      (b.ins_ids[r] if b.ins_ids is not None else [""] * len(r))], dtype=str)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def decode(data, nslots, sender):
    """bytes from encode -> Rows; a payload that is not what encode writes is refused naming the sender."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            origin = "%s (from trainer %d)" % (bytes(z["origin"]).decode(), sender)
            vals = [z["v%d" % k] for k in range(nslots)]
            offs = [z["o%d" % k] for k in range(nslots)]
            linenos = z["linenos"]
            ins_ids = z["ins_ids"].astype(object) if "ins_ids" in z.files else None
    except Exception as e:
        raise ValueError("global_shuffle: the records trainer %d sent are unreadable (%s); do all trainers "
                         "use the same set_use_var slots?" % (sender, e)) from None
    if any(len(o) != len(linenos) + 1 for o in offs):
        raise ValueError("global_shuffle: trainer %d sent %d records whose slot offsets do not match; do all "
                         "trainers use the same set_use_var slots?" % (sender, len(linenos)))
    if ins_ids is not None and len(ins_ids) != len(linenos):
        raise ValueError("global_shuffle: trainer %d sent %d ins ids for %d records" % (sender, len(ins_ids),
                                                                                      len(linenos)))
    return Rows.of(Block(origin, linenos, vals, offs, ins_ids))


def ins_id_trainers(ids, n):
    """The trainer of each ins id (a hash of it), so that records to merge by ins id meet on one trainer,
    as Paddle's global shuffle routes them when merge_by_lineid is set."""
    return np.array([zlib.crc32(str(i).encode("utf-8")) % n for i in ids], np.int64)


def global_shuffle(records, nslots, what, rng, ins_ids=None):
    """This trainer's records after the exchange (not yet shuffled locally); with ins_ids (one per record),
    records go to the trainer of their ins id instead of a random one."""
    ex = TrainerExchange(what)
    dest = rng.randint(0, ex.n, size=len(records)) if ins_ids is None else ins_id_trainers(ins_ids, ex.n)
    payloads = {j: encode(records[dest == j], nslots) for j in range(ex.n) if j != ex.me}
    got = ex.all_to_all(payloads)
    return Rows.concat([records[dest == ex.me]] + [decode(got[s], nslots, s) for s in sorted(got)])


def trainer_sum(value, what):
    return TrainerExchange(what).all_sum(value)
