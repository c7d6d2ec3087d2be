"""Write synthetic Criteo-like click logs with a known, learnable signal.

    python make_data.py [--out_dir data] [--train_files 4] [--samples_per_file 10000] [--test_samples 10000]

Each line is a raw Criteo line, `label \\t I1..I13 \\t C1..C26`: 13 integer counts and 26 categorical values
as 8-hex-digit strings, which `criteo_reader.py` turns into MultiSlot records. The click is drawn as
Bernoulli(sigmoid(z)) with z = dense part + per-value weights of 8 informative categorical slots; the other
18 slots are noise. Because the click probability of every test line is known, `data_info.json` records the
Bayes-optimal test AUC (`oracle_auc`, the AUC of the true probabilities): no model can do better on
average, and a model that learnt nothing scores 0.5. `dense_only_auc` (the AUC of the dense part of
the logit, the best any model ignoring the id slots can do, since the click probability given the dense
features grows with it) tells whether a model learnt from the sparse slots at all. Deterministic for a seed, numpy only (runs under the
Python 3.7 / numpy 1.21 of Paddle 1.8.5 too).
"""

import argparse
import json
import os

import numpy as np

NUM_DENSE, NUM_SPARSE = 13, 26
# per-feature upper bound of the integer counts (the reader divides by it, as PaddleRec's cont_max)
CONT_MAX = [20, 600, 100, 50, 64000, 500, 100, 50, 500, 10, 10, 10, 50]
INFORMATIVE = [0, 3, 5, 8, 12, 16, 20, 24]       # categorical slots whose value moves the click


def auc(score, label):
    """Exact ROC AUC (ties count one half)."""
    order = np.argsort(score, kind="mergesort")
    s, y = score[order], label[order]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):                      # average ranks over ties
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = (i + j) / 2.0 + 1
        i = j + 1
    npos = y.sum()
    nneg = len(y) - npos
    return float((ranks[y == 1].sum() - npos * (npos + 1) / 2.0) / (npos * nneg))


class World:
    """The hidden click model: vocabularies, value popularity and weights, fixed by the seed."""

    def __init__(self, seed):
        rs = np.random.RandomState(seed)
        self.vocab = np.floor(10.0 ** (1.0 + 1.3 * rs.random_sample(NUM_SPARSE))).astype(np.int64)  # 10..200
        self.w_dense = rs.standard_normal(NUM_DENSE) * 0.8
        self.w_value = [rs.standard_normal(int(v)) * (0.7 if s in INFORMATIVE else 0.0)
                        for s, v in enumerate(self.vocab)]
        self.bias = -1.4                                  # about 25% clicks

    def draw(self, n, rs):
        """n samples: (dense ints [n,13], value indices [n,26], click probability [n], dense part of the
        logit [n], label [n])."""
        frac = rs.random_sample((n, NUM_DENSE)) ** 2       # skewed towards small counts
        dense = np.floor(frac * np.array(CONT_MAX)).astype(np.int64)
        u = rs.random_sample((n, NUM_SPARSE))
        values = np.minimum(np.floor(self.vocab * u ** 2.5).astype(np.int64), self.vocab - 1)  # hot values
        z_dense = (dense / np.array(CONT_MAX) - 1.0 / 3) @ self.w_dense * 1.0
        z = self.bias + z_dense
        for s in INFORMATIVE:
            z = z + self.w_value[s][values[:, s]]
        p = 1.0 / (1.0 + np.exp(-z))
        label = (rs.random_sample(n) < p).astype(np.int64)
        return dense, values, p, z_dense, label


def hex_value(slot, idx):
    """The categorical value as Criteo writes it: an 8-hex-digit hash, distinct per (slot, index)."""
    return "%08x" % ((idx * 2654435761 + slot * 40503 + 12345) & 0xFFFFFFFF)


def write(path, dense, values, label):
    with open(path, "w") as f:
        for i in range(len(label)):
            f.write("%d\t%s\t%s\n" % (label[i], "\t".join(str(v) for v in dense[i]),
                                      "\t".join(hex_value(s, values[i, s]) for s in range(NUM_SPARSE))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out_dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    ap.add_argument("--train_files", type=int, default=4)
    ap.add_argument("--samples_per_file", type=int, default=10000)
    ap.add_argument("--test_samples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=2020)
    args = ap.parse_args()
    world = World(args.seed)
    rs = np.random.RandomState(args.seed + 1)
    os.makedirs(os.path.join(args.out_dir, "train"), exist_ok=True)
    os.makedirs(os.path.join(args.out_dir, "test"), exist_ok=True)
    clicks, n = 0, 0
    for k in range(args.train_files):
        dense, values, _, _, label = world.draw(args.samples_per_file, rs)
        write(os.path.join(args.out_dir, "train", "part-%d" % k), dense, values, label)
        clicks, n = clicks + int(label.sum()), n + len(label)
    dense, values, p, z_dense, label = world.draw(args.test_samples, rs)
    write(os.path.join(args.out_dir, "test", "part-0"), dense, values, label)
    info = {"train_samples": n, "train_click_rate": clicks / max(n, 1), "test_samples": len(label),
            "test_click_rate": float(label.mean()), "oracle_auc": auc(p, label),
            "dense_only_auc": auc(z_dense, label), "seed": args.seed}
    with open(os.path.join(args.out_dir, "data_info.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
