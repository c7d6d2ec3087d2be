"""Paddle 1.8.5's numbers for the random layers and mean_iou / gather_tree / linear_lr_warmup (random_misc
family). Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_random_misc.py

Deterministic layers are compared number for number (CASES, random_misc.npz). Random layers cannot give
Paddle's numbers (another generator), so their shape, dtype and sample statistics are recorded
(STATS, random_misc.json) and tests/unit/test_random_misc_paddle18.py checks ours against them.
"""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parity_harness import Case  # noqa: E402

PRED = np.array([0, 1, 2, 2, 1, 0, 3, 3, 1], "int32")
LAB = np.array([0, 2, 2, 1, 1, 0, 3, 0, 1], "int32")
IDS = np.array([[[2, 2], [6, 1]], [[3, 9], [6, 1]], [[0, 1], [9, 0]]], "int64")
PARENTS = np.array([[[0, 0], [1, 1]], [[1, 0], [1, 0]], [[0, 0], [0, 1]]], "int64")
PROBS = np.tile(np.array([[0.1, 0.2, 0.3, 0.4]], "float32"), (4000, 1))
LIKE = np.zeros((3000, 2), "float32")

HYP = np.array([[1, 2, 3, 0], [4, 4, 0, 0], [5, 6, 7, 8]], "int64")
REF = np.array([[1, 3, 0, 0], [4, 5, 6, 0], [8, 7, 6, 5]], "int64")
HLEN = np.array([3, 2, 4], "int64")
RLEN = np.array([2, 3, 4], "int64")

CASES = [
    Case("edit_distance", [("h", HYP), ("r", REF), ("hl", HLEN), ("rl", RLEN)],
         lambda f, h, r, hl, rl: list(f.layers.edit_distance(h, r, input_length=hl, label_length=rl)), grad=False),
    Case("edit_distance_raw", [("h", HYP), ("r", REF), ("hl", HLEN), ("rl", RLEN)],
         lambda f, h, r, hl, rl: list(f.layers.edit_distance(h, r, False, input_length=hl, label_length=rl)),
         grad=False),
    Case("mean_iou", [("p", PRED), ("l", LAB)], lambda f, p, l: list(f.layers.mean_iou(p, l, 4)), grad=False),
    Case("gather_tree", [("i", IDS), ("p", PARENTS)], lambda f, i, p: f.layers.gather_tree(i, p), grad=False),
]


def lr_trace(fluid, steps=6):
    """Values of linear_lr_warmup over `steps` runs, with a float and a Variable base rate (one program each:
    Paddle names the warmup variable `learning_rate_warmup`, so two in one program share it)."""
    def build(make):
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup):
            lr = make()
        return main, startup, lr

    runs = [build(lambda: fluid.layers.linear_lr_warmup(0.5, 3, 0.1, 0.4)),
            build(lambda: fluid.layers.linear_lr_warmup(fluid.layers.fill_constant([1], "float32", 0.25), 4,
                                                        0.0, 1.0))]
    exe = fluid.Executor(fluid.CPUPlace())
    out = []
    for main, startup, lr in runs:
        with fluid.scope_guard(fluid.Scope()):
            exe.run(startup)
            out.append([float(np.asarray(exe.run(main, fetch_list=[lr])[0]).reshape(-1)[0])
                        for _ in range(steps)])
    return out


def edit_distance_lod(fluid):
    """edit_distance over LoD inputs: distances and sequence count."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        h = fluid.layers.data("lh", shape=[1], dtype="int64", lod_level=1)
        r = fluid.layers.data("lr", shape=[1], dtype="int64", lod_level=1)
        d, n = fluid.layers.edit_distance(h, r)
    place = fluid.CPUPlace()
    hv = fluid.create_lod_tensor(np.array([[1], [2], [3], [4], [4], [9]], "int64"), [[3, 2, 1]], place)
    rv = fluid.create_lod_tensor(np.array([[1], [3], [4], [5], [6], [9], [9]], "int64"), [[2, 3, 2]], place)
    exe = fluid.Executor(place)
    with fluid.scope_guard(fluid.Scope()):
        dv, nv = exe.run(main, feed={"lh": hv, "lr": rv}, fetch_list=[d, n])
    return np.asarray(dv).tolist(), np.asarray(nv).tolist()


def _stats(a):
    a = np.asarray(a)
    return {"shape": list(a.shape), "dtype": str(a.dtype), "mean": float(a.mean()), "std": float(a.std()),
            "min": float(a.min()), "max": float(a.max())}


def random_samples(fluid):
    """name -> fetched array of each random layer (fixed seeds where the layer takes one)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        like = fluid.layers.data("like", shape=[3000, 2], dtype="float32", append_batch_size=False)
        probs = fluid.layers.data("probs", shape=[4000, 4], dtype="float32", append_batch_size=False)
        outs = {
            "gaussian_random": fluid.layers.gaussian_random([5000], mean=1.5, std=2.0, seed=3),
            "uniform_random": fluid.layers.uniform_random([5000], min=-2.0, max=3.0, seed=4),
            "uniform_random_f64": fluid.layers.uniform_random([50, 40], dtype="float64"),
            "randn": fluid.layers.randn([100, 50]),
            "randint": fluid.layers.randint(2, 9, shape=[4000], seed=5),
            "randint_high_none": fluid.layers.randint(6, shape=[3000], dtype="int32"),
            "randperm": fluid.layers.randperm(50, seed=6),
            "sampling_id": fluid.layers.sampling_id(probs, seed=7),
            "uniform_random_batch_size_like": fluid.layers.uniform_random_batch_size_like(
                like, [-1, 3], min=1.0, max=2.0, seed=8),
            "gaussian_random_batch_size_like": fluid.layers.gaussian_random_batch_size_like(
                like, [2, -1], input_dim_idx=0, output_dim_idx=1, mean=-1.0, std=0.5, seed=9),
        }
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        names = sorted(outs)
        vals = exe.run(main, feed={"like": LIKE, "probs": PROBS}, fetch_list=[outs[n] for n in names])
    return dict(zip(names, [np.asarray(v) for v in vals]))


if __name__ == "__main__":
    import paddle.fluid as fluid
    from parity_harness import record
    record(fluid, CASES, os.path.join(HERE, "random_misc.npz"))
    samples = random_samples(fluid)
    out = {"lr_trace": lr_trace(fluid), "edit_distance_lod": edit_distance_lod(fluid), "stats": {n: _stats(v) for n, v in samples.items()},
           "randperm_sorted": sorted(samples["randperm"].tolist()),
           "sampling_id_freq": np.bincount(samples["sampling_id"].astype("int64"), minlength=4).tolist(),
           "randint_values": sorted(set(samples["randint"].tolist()))}
    with open(os.path.join(HERE, "random_misc.json"), "w") as fh:
        json.dump(out, fh)
    print(json.dumps(out)[:1500])
