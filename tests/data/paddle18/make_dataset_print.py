"""What Paddle 1.8.5 prints for train_from_dataset / infer_from_dataset(fetch_list, fetch_info, print_period)
(its C++ PrintVar dump of each fetched tensor, every print_period batches of thread 0) and for str(LoDTensor).
Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_dataset_print.py

run_case(fluid, name, workdir) runs unchanged on paddle_compat in tests/unit/test_dataset_print_paddle18.py.
"""

import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _lines():
    rs = np.random.RandomState(0)
    lines = []
    for _ in range(20):
        ids = [list(rs.randint(0, 20, size=rs.randint(1, 4))) for _ in range(2)]
        d = np.round(rs.uniform(-1, 1, 3), 3)
        lines.append(" ".join("%d %s" % (len(x), " ".join(map(str, x))) for x in ids) + " 3 " +
                     " ".join(map(str, d)) + " 1 %d\n" % int(rs.rand() > 0.5))
    return lines


# name -> (run kind, fetch names, fetch_info). Recorded with print_period=1: Paddle 1.8.5 counts a thread's
# batches from an uninitialized counter, so with a larger period the batches it prints vary from run to run
# (for period 3 over 5 batches we saw batch 3; batches 1 and 4; batches 2 and 5). Here the count starts at 0:
# batches period, 2*period, ... (one of 1.8.5's outcomes, the one it intends); the test takes those dumps from
# the period-1 record.
CASES = {
    "train_all_kinds": ("train", ["loss", "auc", "label", "pred", "dense", "s1"],
                        ["loss", "auc", "lab", "pred", "d", "s1"]),
    "train_auc": ("train", ["auc"], ["Epoch 0 auc "]),
    "train_ids": ("train", ["loss", "s0"], ["L", "ids"]),
    "infer": ("infer", ["loss"], ["loss"]),
}
BATCHES = 5


def run_case(fluid, name, workdir, period=1):
    """Runs the case; what it prints goes to stdout (the caller captures it)."""
    kind, fetch, info = CASES[name]
    path = os.path.join(workdir, "a.txt")
    with open(path, "w") as f:
        f.writelines(_lines())
    main, startup = fluid.Program(), fluid.Program()
    with fluid.unique_name.guard(), fluid.program_guard(main, startup):
        slots = [fluid.data("s%d" % i, [None, 1], "int64", lod_level=1) for i in range(2)]
        dense = fluid.data("dense", [None, 3], "float32")
        label = fluid.data("label", [None, 1], "int64")
        E = np.linspace(-0.5, 0.5, 80).reshape(20, 4).astype("float32")
        pooled = [fluid.layers.sequence_pool(fluid.layers.embedding(x, [20, 4], param_attr=fluid.ParamAttr(
            name="emb", initializer=fluid.initializer.NumpyArrayInitializer(E))), "sum") for x in slots]
        pred = fluid.layers.fc(fluid.layers.concat(pooled + [dense], axis=1), 2, act="softmax",
                               param_attr=fluid.ParamAttr(name="fc_w", initializer=fluid.initializer.Constant(0.1)))
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
        auc, _, _ = fluid.layers.auc(pred, label)
        fluid.optimizer.SGD(0.5).minimize(loss)
    named = {"loss": loss, "auc": auc, "label": label, "pred": pred, "dense": dense, "s0": slots[0], "s1": slots[1]}
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        ds = fluid.DatasetFactory().create_dataset("QueueDataset")
        ds.set_use_var(slots + [dense, label])
        ds.set_pipe_command("cat")
        ds.set_batch_size(4)
        ds.set_thread(1)
        ds.set_filelist([path])
        run = exe.train_from_dataset if kind == "train" else exe.infer_from_dataset
        run(main, ds, thread=1, fetch_list=[named[n] for n in fetch], fetch_info=info, print_period=period)
        sys.stdout.flush()


TENSORS = [("float32", [0.682964, -1.5e-07, 1234567.0], None), ("int64", [[0], [1], [2], [3], [4], [5]],
                                                                  [[2, 1], [1, 2, 3]]),
           ("float64", [1e-7, 123456789.0, -2.5, 1 / 3.0], None), ("bool", [True, False], None),
           ("int32", list(range(12)), None), ("float32", [[np.inf, np.nan], [-0.0, 2.0]], [[0, 1, 2]]),
           ("int16", [[1, 2]], None), ("int8", [65, 66], None)]


def tensor_texts(fluid):
    out = []
    for dtype, values, lod in TENSORS:
        t = fluid.LoDTensor()
        t.set(np.array(values, dtype), fluid.CPUPlace())
        if lod:
            t.set_lod(lod) if lod[0][0] == 0 else t.set_recursive_sequence_lengths(lod)
        out.append(str(t))
    return out


def _capture_fd1(fn):
    """C++ writes to file descriptor 1: catch it there."""
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "out.txt")
    sys.stdout.flush()
    saved = os.dup(1)
    with open(out, "w") as f:
        os.dup2(f.fileno(), 1)
        try:
            fn(tmp)
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
    with open(out) as f:
        return f.read()


if __name__ == "__main__":
    import paddle.fluid as fluid
    rec = {"cases": {name: _capture_fd1(lambda d, n=name: run_case(fluid, n, d)) for name in CASES},
           "tensors": tensor_texts(fluid)}
    with open(os.path.join(HERE, "dataset_print.json"), "w") as fh:
        json.dump(rec, fh, indent=0, sort_keys=True)
    print("wrote", {k: v.count("lod:") for k, v in rec["cases"].items()})
