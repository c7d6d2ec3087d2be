"""The CTR reference of ../shared/reference/ctr_README.md (real PaddlePaddle 3.3.1): its synthetic data and
initial weights, regenerated bit for bit from the README's recipe (numpy RandomState draws in the stated
order, float64 arithmetic in the stated order, vectorised over samples), and its per-step feeds.
"""

import numpy as np

from reference_data import load_reference

N = 6400
BATCH = 32
SLOTS = ["C%d" % i for i in range(1, 9)]
DENSE = 13
VOCAB = 100000
EMB_DIM = 8
HIDDEN = (64, 32)


def make_data():
    """(dense [N,13] float32, [(lens [N] int64, ids [T] int64) per slot], label [N,1] int64)."""
    rs = np.random.RandomState(2)
    dense = rs.random_sample((N, DENSE)).astype(np.float32)
    slots = []
    for _ in SLOTS:
        lens = (1 + np.floor(4.0 * rs.random_sample(N))).astype(np.int64)
        v = rs.random_sample(int(lens.sum()))
        ids = np.minimum(np.floor(100000.0 * (((v * v) * v) * v)), 99999).astype(np.int64)
        slots.append((lens, ids))
    wd = 2.0 * rs.random_sample(DENSE) - 1.0
    wid = 2.0 * rs.random_sample(VOCAB) - 1.0
    noise = rs.random_sample(N)
    # the hidden rule, accumulated per sample in the README's order (vectorised across samples)
    z = np.zeros(N)
    for j in range(DENSE):
        z = z + (4.0 * wd[j]) * (dense[:, j].astype(np.float64) - 0.5)
    for lens, ids in slots:
        offs = np.concatenate([[0], np.cumsum(lens)[:-1]])
        for k in range(int(lens.max())):
            has = lens > k
            z[has] = z[has] + 0.5 * wid[ids[offs[has] + k]]
    z = z + 3.0 * (noise - 0.5)
    label = (z > 0.0).astype(np.int64).reshape(N, 1)
    return dense, slots, label


def make_init():
    """{param name: initial value} for emb_table and the three fc layers."""
    rs = np.random.RandomState(3)
    init = {"emb_table": (-0.01 + 0.02 * rs.random_sample((VOCAB, EMB_DIM))).astype(np.float32)}
    sizes = [len(SLOTS) * EMB_DIM + DENSE] + list(HIDDEN) + [2]
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        lim = np.sqrt(6.0 / (fan_in + fan_out))
        init["fc_%d.w_0" % i] = (-lim + (2 * lim) * rs.random_sample((fan_in, fan_out))).astype(np.float32)
        init["fc_%d.b_0" % i] = np.zeros(fan_out, np.float32)
    return init


def feeds(fluid, data, step, size=BATCH, place=None):
    """The feed dict of samples [size*step, size*step+size): LoD tensors built with create_lod_tensor."""
    dense, slots, label = data
    place = place or fluid.CPUPlace()
    lo, hi = size * step, size * step + size
    out = {"dense_input": dense[lo:hi], "label": label[lo:hi]}
    for name, (lens, ids) in zip(SLOTS, slots):
        offs = np.concatenate([[0], np.cumsum(lens)])
        part = lens[lo:hi]
        out[name] = fluid.create_lod_tensor(ids[offs[lo]:offs[hi]].reshape(-1, 1), [part.tolist()], place)
    return out


def rank_auc(scores, labels):
    """Exact ROC AUC: the Mann-Whitney statistic with tied scores sharing their average rank."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    labels = np.asarray(labels).reshape(-1) != 0
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    n_pos, n_neg = labels.sum(), (~labels).sum()
    return (ranks[labels].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def reference():
    return load_reference("ctr_losses.json")
