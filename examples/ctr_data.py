"""Synthetic Criteo-like click data, deterministic for a seed: 13 dense features and 26 categorical slots
whose values are hashed into one shared id space (the usual `hash(slot, value) % table_height` trick),
with a hidden logistic-style rule deciding the click.

    data = SyntheticCTR(num_samples=20000, seed=1)
    for sample in data.samples():            # (dense[13], ids of C1, ..., ids of C26, [label])
        ...
    for fields in data.batches(64, place):   # the same, batched: numpy dense/label, LoDTensor id slots
        ...

Slot vocabularies differ (a few values up to ~1e5, as in Criteo), values are power-law distributed, and a
slot holds 1 to max_len values per sample (multi-valued slots exercise the LoD path). Everything is drawn
with numpy RandomState in a fixed order, so a seed gives the same data on every machine.
"""

import numpy as np

__all__ = ["SyntheticCTR"]


class SyntheticCTR:
    def __init__(self, num_samples=10000, num_slots=26, dense_dim=13, table_height=1000001, max_len=3, seed=0,
                 positive_rate=0.25):
        if num_samples <= 0 or num_slots <= 0 or table_height <= 0 or max_len <= 0:
            raise ValueError("SyntheticCTR: num_samples, num_slots, table_height and max_len must be positive")
        self.num_samples, self.num_slots, self.dense_dim = num_samples, num_slots, dense_dim
        self.table_height, self.max_len = table_height, max_len
        self.slot_names = ["C%d" % (i + 1) for i in range(num_slots)]
        rs = np.random.RandomState(seed)
        n = num_samples
        self.dense = rs.random_sample((n, dense_dim)).astype(np.float32)
        vocab = np.floor(10.0 ** (1.0 + 4.0 * rs.random_sample(num_slots))).astype(np.int64)   # 10 .. 1e5
        self.lengths, self.ids, raws = [], [], []
        for s in range(num_slots):
            lens = 1 + np.floor(max_len * rs.random_sample(n)).astype(np.int64)
            u = rs.random_sample(int(lens.sum()))
            raw = np.floor(vocab[s] * u ** 3).astype(np.int64)                   # power law: few hot values
            self.lengths.append(lens)
            raws.append(raw)
            self.ids.append((raw * 7919 + s * 1000003) % table_height)           # hashed into the shared table
        w_dense = rs.standard_normal(dense_dim)
        w_slot = rs.standard_normal(num_slots) * 0.5
        w_val = rs.standard_normal(max(int(vocab.max()), 1))
        z = (self.dense - 0.5) @ w_dense
        for s in range(num_slots):
            seg = np.repeat(np.arange(n), self.lengths[s])
            contrib = np.bincount(seg, weights=w_val[(raws[s] * 8191) % w_val.shape[0]], minlength=n)
            z += w_slot[s] * contrib / self.lengths[s]
        z += rs.logistic(size=n)
        self.label = (z > np.quantile(z, 1.0 - positive_rate)).astype(np.int64).reshape(n, 1)
        self.offsets = [np.concatenate([[0], np.cumsum(lens)]) for lens in self.lengths]

    def samples(self, start=0, stop=None):
        """Yield samples (dense list, ids list per slot..., [label]): DataFeeder's per-sample form."""
        stop = self.num_samples if stop is None else min(stop, self.num_samples)
        dense, label = self.dense.tolist(), self.label.tolist()
        for i in range(start, stop):
            yield ([dense[i]] + [self.ids[s][self.offsets[s][i]:self.offsets[s][i + 1]].tolist()
                                 for s in range(self.num_slots)] + [label[i]])

    def sample_reader(self, start=0, stop=None):
        """A reader (a function returning a fresh generator) over samples [start, stop)."""
        return lambda: self.samples(start, stop)

    def batches(self, batch_size, place, start=0, stop=None, drop_last=True):
        """Yield minibatches as [dense [B,13] float32, LoDTensor [T,1] int64 per slot..., label [B,1] int64],
        built directly from the arrays (no per-sample Python work)."""
        from paddle_compat.fluid.lod_tensor import create_lod_tensor
        stop = self.num_samples if stop is None else min(stop, self.num_samples)
        for lo in range(start, stop, batch_size):
            hi = min(lo + batch_size, stop)
            if hi - lo < batch_size and drop_last:
                return
            fields = [self.dense[lo:hi]]
            for s in range(self.num_slots):
                off = self.offsets[s]
                fields.append(create_lod_tensor(self.ids[s][off[lo]:off[hi]].reshape(-1, 1),
                                                [self.lengths[s][lo:hi].tolist()], place))
            fields.append(self.label[lo:hi])
            yield fields

    def batch_reader(self, batch_size, place, start=0, stop=None, drop_last=True):
        return lambda: self.batches(batch_size, place, start, stop, drop_last)
