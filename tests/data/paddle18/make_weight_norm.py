"""Records WeightNormParamAttr from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_weight_norm.py

Writes weight_norm.json beside this script: for an fc weight [4, 3] with dim None, 0 and 1 and a conv2d
filter [3, 2, 2, 2] with dim 0 and 2 (v initialised from fixed arrays), after the startup program and after
2 SGD steps: g, v, their gradients and the loss per step; and each program's op types (startup and main).
tests/unit/test_weight_norm_paddle18.py builds the same programs (build() takes the fluid module).
Python 3.7 compatible.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(7)
X_FC = rng.uniform(-1, 1, (5, 4)).astype("float32")
X_CONV = rng.uniform(-1, 1, (2, 2, 4, 4)).astype("float32")
V_FC = rng.uniform(-1, 1, (4, 3)).astype("float32")
V_CONV = rng.uniform(-1, 1, (3, 2, 2, 2)).astype("float32")
CASES = [("fc", None), ("fc", 0), ("fc", 1), ("conv", 0), ("conv", 2)]
STEPS = 2


def build(fluid, kind, dim):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        with fluid.unique_name.guard():
            if kind == "fc":
                x = fluid.layers.data(name="x", shape=[4], dtype="float32")
                attr = fluid.WeightNormParamAttr(dim=dim, name="wn",
                                                 initializer=fluid.initializer.NumpyArrayInitializer(V_FC))
                out = fluid.layers.fc(x, size=3, param_attr=attr, bias_attr=False)
            else:
                x = fluid.layers.data(name="x", shape=[2, 4, 4], dtype="float32")
                attr = fluid.WeightNormParamAttr(dim=dim, name="wn",
                                                 initializer=fluid.initializer.NumpyArrayInitializer(V_CONV))
                out = fluid.layers.conv2d(x, num_filters=3, filter_size=2, param_attr=attr, bias_attr=False)
            loss = fluid.layers.reduce_mean(fluid.layers.square(out))
            fluid.optimizer.SGD(0.5).minimize(loss)
    return main, startup, loss


def run(fluid, kind, dim):
    main, startup, loss = build(fluid, kind, dim)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    x = X_FC if kind == "fc" else X_CONV
    rec = {"startup_ops": [op.type for op in startup.global_block().ops],
           "main_ops": [op.type for op in main.global_block().ops], "steps": []}
    with fluid.scope_guard(scope):
        exe.run(startup)
        rec["g0"] = np.array(scope.find_var("wn_g").get_tensor()).tolist()
        rec["v0"] = np.array(scope.find_var("wn_v").get_tensor()).tolist()
        for _ in range(STEPS):
            got = exe.run(main, feed={"x": x}, fetch_list=[loss, "wn_g@GRAD", "wn_v@GRAD"])
            rec["steps"].append({"loss": float(np.array(got[0]).ravel()[0]),
                                 "g_grad": np.array(got[1]).tolist(), "v_grad": np.array(got[2]).tolist(),
                                 "g": np.array(scope.find_var("wn_g").get_tensor()).tolist()})
    return rec


def main():
    import paddle.fluid as fluid
    out = {"%s_%s" % (k, d): run(fluid, k, d) for k, d in CASES}
    with open(os.path.join(HERE, "weight_norm.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
