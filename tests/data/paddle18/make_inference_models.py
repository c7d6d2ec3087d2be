"""Record inference models written by real Paddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_inference_models.py

An MLP, a small conv net with batch_norm, a CTR-style model with a LoD slot and a sequence model whose output keeps
its LoD, each saved with save_inference_model twice (one file per
parameter, and params_filename="params") under tests/data/paddle18/inference/<name>[_combined]/, with
the fixed inputs (and sequence lengths of LoD inputs) and Paddle's outputs in <name>_io.npz.
(The attribute types the ProgramDesc writer needs come from paddle_compat/ir/op_protos.json, which
make_op_protos.py records.)"""

import json
import os

import numpy as np
import paddle.fluid as fluid
from paddle.fluid.proto import framework_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "inference")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def mlp():
    x = fluid.layers.data(name="x", shape=[6], dtype="float32")
    h = fluid.layers.fc(input=x, size=8, act="relu")
    h = fluid.layers.fc(input=h, size=5, act="tanh")
    return ["x"], [fluid.layers.fc(input=h, size=3, act="softmax")], {"x": (4, 6)}


def conv():
    img = fluid.layers.data(name="img", shape=[2, 8, 8], dtype="float32")
    c = fluid.layers.conv2d(img, num_filters=4, filter_size=3, padding=1)
    c = fluid.layers.batch_norm(c, act="relu")
    c = fluid.layers.pool2d(c, pool_size=2, pool_stride=2, pool_type="max")
    return ["img"], [fluid.layers.fc(input=c, size=3, act="softmax"), c], {"img": (3, 2, 8, 8)}


def ctr():
    # a CTR-style model: one LoD slot of ids (embedding + sum pooling) and a dense slot
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
    dense = fluid.layers.data(name="dense", shape=[3], dtype="float32")
    emb = fluid.layers.embedding(ids, size=[20, 4], is_sparse=True)
    pooled = fluid.layers.sequence_pool(emb, "sum")
    h = fluid.layers.fc(input=fluid.layers.concat([pooled, dense], axis=1), size=5, act="relu")
    return ["ids", "dense"], [fluid.layers.fc(input=h, size=2, act="softmax")], {"ids": (7, 1), "dense": (3, 3)}


def seq():
    # outputs that keep the input's LoD (per-step values) next to a pooled one
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
    emb = fluid.layers.embedding(ids, size=[20, 4])
    steps = fluid.layers.fc(input=emb, size=3, act="tanh")
    return ["ids"], [steps, fluid.layers.sequence_pool(steps, "max")], {"ids": (7, 1)}


LODS = {"ids": [2, 4, 1]}     # sequence lengths of each LoD input (sum = its rows)


def _feed_value(name, arr):
    if name in LODS:
        return fluid.create_lod_tensor(arr, [LODS[name]], fluid.CPUPlace())
    return arr


def record(name, build):
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 7
    with fluid.program_guard(main, start):
        feeds, targets, shapes = build()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    rng = np.random.RandomState(3)
    with fluid.scope_guard(scope):
        exe.run(start)
        # batch_norm's running statistics are not trivial, so reading them is tested
        for v in main.list_vars():
            if v.persistable and ("mean" in v.name or "variance" in v.name):
                t = scope.find_var(v.name).get_tensor()
                a = np.array(t)
                t.set((rng.rand(*a.shape) + 0.5).astype(a.dtype), fluid.CPUPlace())
        feed = {n: (rng.randint(0, 20, size=shapes[n]).astype("int64") if n in LODS
                    else rng.rand(*shapes[n]).astype("float32")) for n in feeds}
        test = main.clone(for_test=True)
        outs = [np.array(t) for t in exe.run(test, feed={n: _feed_value(n, a) for n, a in feed.items()},
                                             fetch_list=targets, return_numpy=False)]
        for sub, pf in ((name, None), (name + "_combined", "params")):
            d = os.path.join(OUT, sub)
            fluid.io.save_inference_model(d, feeds, targets, exe, main_program=main, params_filename=pf)
    arrays = dict(("in_" + k, v) for k, v in feed.items())
    arrays.update(("lod_" + k, np.array(LODS[k])) for k in feed if k in LODS)
    arrays.update(("out_%d" % i, o) for i, o in enumerate(outs))
    np.savez(os.path.join(OUT, name + "_io.npz"), **arrays)
    json.dump({"feeds": feeds, "fetches": [t.name for t in targets]},
              open(os.path.join(OUT, name + "_names.json"), "w"))


MODELS = {"mlp": mlp, "conv": conv, "ctr": ctr, "seq": seq}

if __name__ == "__main__":
    # (names on the command line record only those models, leaving the other fixtures as they are)
    import sys
    os.makedirs(OUT, exist_ok=True)
    for name in sys.argv[1:] or list(MODELS):
        record(name, MODELS[name])
