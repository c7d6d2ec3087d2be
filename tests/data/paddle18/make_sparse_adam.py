"""Records Adam on a row-sparse gradient (embedding(is_sparse=True)), lazy_mode on and off, from real
PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_sparse_adam.py

The net and steps of tests/unit/test_sparse_grad.py (a 10x3 table, sum-pooled lookups weighted per sequence):
writes sparse_adam.json with the initial table, the steps and, per mode, the table after each step."""

import json
import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = np.random.RandomState(0).uniform(-1, 1, (10, 3)).astype(np.float32)
STEPS = [(np.array([[1], [4], [4], [9]], np.int64), [3, 1], np.array([[1, 2, 3], [-1, .5, 2]], np.float32)),
         (np.array([[2], [1]], np.int64), [1, 1], np.array([[.5, .5, .5], [2, -3, 1]], np.float32))]


def run(lazy):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
        w = fluid.layers.data(name="w", shape=[3], dtype="float32")
        attr = fluid.ParamAttr(name="table", initializer=fluid.initializer.NumpyArrayInitializer(TABLE))
        emb = fluid.layers.embedding(ids, size=[10, 3], is_sparse=True, param_attr=attr)
        pooled = fluid.layers.sequence_pool(emb, "sum")
        loss = fluid.layers.reduce_sum(fluid.layers.elementwise_mul(pooled, w))
        fluid.optimizer.Adam(0.1, lazy_mode=lazy).minimize(loss)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    tables = []
    with fluid.scope_guard(scope):
        exe.run(start)
        for i, lens, wv in STEPS:
            exe.run(main, feed={"ids": fluid.create_lod_tensor(i, [lens], fluid.CPUPlace()), "w": wv},
                    fetch_list=[loss])
            tables.append(np.array(scope.find_var("table").get_tensor()).tolist())
    return tables


if __name__ == "__main__":
    out = {"table": TABLE.tolist(), "steps": [[i.tolist(), lens, wv.tolist()] for i, lens, wv in STEPS],
           "lazy": run(True), "not_lazy": run(False)}
    with open(os.path.join(HERE, "sparse_adam.json"), "w") as f:
        json.dump(out, f)
