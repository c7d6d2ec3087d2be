"""Reference numbers: CPU_NUM=2 data parallel training with embedding(is_sparse=True).

Run with Paddle 1.8.5 (outside CI): GLOG_v=0 OMP_NUM_THREADS=1 python make_sparse_data_parallel.py
It writes sparse_data_parallel.json next to this file. tests/unit/test_sparse_data_parallel.py builds the
same program with paddle_compat (the model code is shared: build_and_train).
"""

import json
import os

import numpy as np


def build_and_train(fluid, steps=3):
    ids = fluid.data("ids", [None, 1], "int64")
    y = fluid.data("y", [None, 1], "float32")
    table = (np.arange(40).reshape(10, 4) / 40.0).astype("float32")
    emb = fluid.embedding(ids, size=[10, 4], is_sparse=True, param_attr=fluid.ParamAttr(
        name="emb", initializer=fluid.initializer.NumpyArrayInitializer(table)))
    pred = fluid.layers.fc(emb, 1, param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.5)))
    loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
    fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    prog = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(loss_name=loss.name)
    feed = {"ids": np.array([[1], [2], [3], [1]], "int64"), "y": np.ones([4, 1], "float32")}
    losses = [exe.run(prog, feed=feed, fetch_list=[loss])[0].tolist() for _ in range(steps)]
    emb_after = np.array(fluid.global_scope().find_var("emb").get_tensor()).tolist()
    return {"losses": losses, "emb": emb_after}


if __name__ == "__main__":
    os.environ["CPU_NUM"] = "2"
    import paddle.fluid as fluid
    out = build_and_train(fluid)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sparse_data_parallel.json"), "w") as f:
        json.dump(out, f, indent=1)
