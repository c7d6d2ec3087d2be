"""fluid.dataset feeding cost: MultiSlot parse and batch rates, and train_from_dataset vs exe.run on prebuilt
feeds, for a CTR model with 26 id slots (1-3 ids each), 13 dense values and a label.

    python benchmarks/dataset_feed.py [--lines 20000] [--batch 256] [--rounds 5]

Prints samples/s for: parsing alone (read_file with "cat"), parsing + batching into feeds, training with
exe.run on feeds built beforehand, and train_from_dataset (thread 1, and 2: two Hogwild workers) including
the reading, which runs in helper processes (fluid/dataset/reader.py); the three training variants
alternate for --rounds rounds and medians are printed (OMP_NUM_THREADS=1). On a loaded machine the wall
ratios depend on whether the helpers find a free core; the CPU line (this process's CPU time per sample,
helpers not counted) says what train_from_dataset costs the trainer itself.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import paddle_compat as fluid  # noqa: E402
from paddle_compat.fluid.dataset.feed import Rows, SlotSpec, make_batch, read_file  # noqa: E402

SLOTS, VOCAB, DENSE = 26, 100000, 13


def write_files(path_prefix, lines, nfiles, seed=0):
    rs = np.random.RandomState(seed)
    paths = []
    per = lines // nfiles
    for f in range(nfiles):
        out = []
        for _ in range(per):
            parts = []
            for _ in range(SLOTS):
                ids = rs.randint(0, VOCAB, size=rs.randint(1, 4))
                parts.append("%d %s" % (len(ids), " ".join(map(str, ids))))
            parts.append("%d %s" % (DENSE, " ".join("%.4f" % v for v in rs.rand(DENSE))))
            parts.append("1 %d" % rs.randint(0, 2))
            out.append(" ".join(parts) + "\n")
        p = "%s-%d" % (path_prefix, f)
        with open(p, "w") as fh:
            fh.writelines(out)
        paths.append(p)
    return paths


def build():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        ids = [fluid.data("C%d" % i, shape=[None, 1], dtype="int64", lod_level=1) for i in range(SLOTS)]
        dense = fluid.data("dense", shape=[None, DENSE], dtype="float32")
        label = fluid.data("label", shape=[None, 1], dtype="int64")
        pooled = [fluid.layers.sequence_pool(fluid.layers.embedding(
            s, size=[VOCAB, 10], is_sparse=True, param_attr=fluid.ParamAttr(name="emb")), "sum") for s in ids]
        h = fluid.layers.fc(fluid.layers.concat(pooled + [dense], axis=1), 64, act="relu")
        predict = fluid.layers.fc(h, 2, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, label))
        fluid.optimizer.SGD(0.01).minimize(loss)
    return main, startup, ids + [dense, label], loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    paths = write_files(os.path.join(tmp, "part"), args.lines, 2)
    prog, startup, use_vars, loss = build()
    slots = [SlotSpec(v) for v in use_vars]
    n = args.lines
    make_batch(read_file(paths[0], "cat", slots, 600)[:2], slots)   # warm-up: the first LoDTensor loads torch

    t_parse, c_parse, t_batch = [], [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        recs = Rows.concat([read_file(p, "cat", slots, 600) for p in paths])
        t_parse.append(time.perf_counter() - t0)
        c_parse.append(time.process_time() - c0)
        t0 = time.perf_counter()
        feeds = [make_batch(recs[i:i + args.batch], slots, fluid.CPUPlace()) for i in range(0, n, args.batch)]
        t_batch.append(time.perf_counter() - t0)
    t_parse, c_parse, t_batch = min(t_parse), min(c_parse), min(t_batch)
    print("parse:            %9.0f samples/s (CPU time: %.0f samples/s)" % (n / t_parse, n / c_parse))
    print("parse + batch:    %9.0f samples/s" % (n / (t_parse + t_batch)))

    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    rates = {"exe.run, feed dicts built beforehand": [], "train_from_dataset thread=1": [],
             "train_from_dataset thread=2": []}
    cpu = {"exe.run": [], "thread=1": []}
    with fluid.scope_guard(scope):
        exe.run(startup)
        exe.run(prog, feed=feeds[0], fetch_list=[loss])   # warm-up (lowering)
        ds = fluid.DatasetFactory().create_dataset("QueueDataset")
        ds.set_use_var(use_vars)
        ds.set_batch_size(args.batch)
        ds.set_filelist(paths)
        for _ in range(args.rounds):     # alternating, so load on a shared machine hits every variant alike
            t0, c0 = time.perf_counter(), time.process_time()
            for f in feeds:
                exe.run(prog, feed=f, fetch_list=[loss])
            rates["exe.run, feed dicts built beforehand"].append(n / (time.perf_counter() - t0))
            cpu["exe.run"].append(time.process_time() - c0)
            for thread in (1, 2):
                t0, c0 = time.perf_counter(), time.process_time()
                exe.train_from_dataset(prog, ds, thread=thread)
                rates["train_from_dataset thread=%d" % thread].append(n / (time.perf_counter() - t0))
                if thread == 1:
                    cpu["thread=1"].append(time.process_time() - c0)
    base = rates["exe.run, feed dicts built beforehand"]
    for k, v in rates.items():
        ratio = statistics.median([a / b for a, b in zip(v, base)])
        print("%-40s median %8.0f samples/s  (x%.2f of exe.run; rounds: %s)"
              % (k, statistics.median(v), ratio, ", ".join("%.0f" % x for x in v)))
    print("this process's CPU time per sample, exe.run / train_from_dataset thread=1: median %.2f"
          % statistics.median([a / b for a, b in zip(cpu["exe.run"], cpu["thread=1"])]))
    one, two = rates["train_from_dataset thread=1"], rates["train_from_dataset thread=2"]
    print("thread=2 (Hogwild) / thread=1: median of per-round ratios %.2f"
          % statistics.median([b / a for a, b in zip(one, two)]))

if __name__ == "__main__":
    main()
