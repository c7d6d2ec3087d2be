"""Record a combined parameter file written by real Paddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_combined_params.py

A small MLP (fc 4->3 relu, fc 3->2, Adam) whose parameters are set to fixed values, saved with
save_params(filename="params") and save_persistables(filename="persistables"): the files, and the values
(by name) they must load into, go to tests/data/paddle18/combined/."""

import json
import os

import numpy as np
import paddle.fluid as fluid

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "combined")


def build():
    x = fluid.layers.data(name="x", shape=[4], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="int64")
    h = fluid.layers.fc(input=x, size=3, act="relu", param_attr=fluid.ParamAttr(name="zz_w"),
                        bias_attr=fluid.ParamAttr(name="zz_b"))
    p = fluid.layers.fc(input=h, size=2, act="softmax", param_attr=fluid.ParamAttr(name="aa_w"),
                        bias_attr=fluid.ParamAttr(name="aa_b"))
    loss = fluid.layers.mean(fluid.layers.cross_entropy(input=p, label=y))
    fluid.optimizer.Adam(learning_rate=0.01).minimize(loss)
    return loss


def main():
    os.makedirs(OUT, exist_ok=True)
    main_p, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main_p, start):
        build()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.global_scope()
    exe.run(start)
    values = {}
    for i, v in enumerate(sorted(v.name for v in main_p.list_vars() if v.persistable)):
        t = scope.find_var(v).get_tensor()
        a = np.array(t)
        val = (np.arange(a.size, dtype=np.float32).reshape(a.shape) * 0.1 + i).astype(a.dtype)
        t.set(val, fluid.CPUPlace())
        values[v] = val.tolist()
    fluid.io.save_params(exe, OUT, main_p, filename="params")
    fluid.io.save_persistables(exe, OUT, main_p, filename="persistables")
    params = sorted(p.name for p in main_p.all_parameters())
    with open(os.path.join(OUT, "values.json"), "w") as f:
        json.dump({"values": values, "params": params, "paddle": fluid.__version__ if hasattr(fluid, "__version__")
                   else "1.8.5"}, f)


if __name__ == "__main__":
    main()
