"""Records a second backward over the same program from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_backward_twice.py

A later append_backward (or minimize) names the gradients it writes apart from those already in the block:
an @GRAD output that exists becomes 'grad/' * k + name (k counts the program's backwards), and the grad ops
of forward ops read the renamed one. Writes backward_twice.json beside this script: per case the ops (type,
the @GRAD names each reads, what it writes), the (param, grad) names each backward returned, and for the
training case the losses and parameters of three steps. tests/unit/test_backward_twice_paddle18.py builds
the same programs (the functions below take the fluid module).
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.RandomState(5)
X = rng.uniform(-1, 1, (6, 3)).astype("float32")
LABEL = rng.randint(0, 2, (6, 1)).astype("int64")
W = rng.uniform(-0.5, 0.5, (3, 2)).astype("float32")


def tower(fluid):
    L = fluid.layers
    x = L.data(name="x", shape=[3], dtype="float32")
    h = L.fc(x, 2, act="tanh", param_attr=fluid.ParamAttr("w", initializer=fluid.initializer.NumpyArrayInitializer(W)),
             bias_attr=fluid.ParamAttr("b", initializer=fluid.initializer.Constant(0.1)))
    return x, h


def two_backwards(fluid):
    x, h = tower(fluid)
    l1 = fluid.layers.mean(h)
    l2 = fluid.layers.mean(fluid.layers.square(h))
    pg1 = fluid.backward.append_backward(l1)
    pg2 = fluid.backward.append_backward(l2)
    return [pg1, pg2]


def three_backwards(fluid):
    x, h = tower(fluid)
    l1 = fluid.layers.mean(h)
    l2 = fluid.layers.reduce_sum(fluid.layers.abs(h))
    l3 = fluid.layers.mean(fluid.layers.square(h))
    return [fluid.backward.append_backward(l) for l in (l1, l2, l3)]


def two_minimizes(fluid):
    """test_prune's net1: one softmax fc, two cross-entropy losses, an SGD minimize each."""
    L = fluid.layers
    x, h = tower(fluid)
    label = L.data(name="label", shape=[1], dtype="int64")
    y = L.softmax(h)
    l1 = L.mean(L.cross_entropy(input=y, label=label))
    l2 = L.mean(L.cross_entropy(input=y, label=label))
    _, pg1 = fluid.optimizer.SGD(0.5).minimize(l1)
    _, pg2 = fluid.optimizer.SGD(0.3).minimize(l2)
    return [pg1, pg2], (l1, l2)


def ops(block):
    out = []
    for op in block.ops:
        out.append([op.type, sorted(n for n in op.input_arg_names if "@GRAD" in n),
                    {k: op.output(k) for k in op.output_names if op.output(k)}])
    return out


def record(fluid, case):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        if case == "two_minimizes":
            pgs, losses = two_minimizes(fluid)
        else:
            pgs = {"two_backwards": two_backwards, "three_backwards": three_backwards}[case](fluid)
    rec = {"ops": ops(main.global_block()), "params_grads": [[[p.name, g.name] for p, g in pg] for pg in pgs],
           "vars": sorted(n for n in main.global_block().vars if "@GRAD" in n)}
    if case == "two_minimizes":
        exe = fluid.Executor(fluid.CPUPlace())
        scope = fluid.Scope()
        with fluid.scope_guard(scope):
            exe.run(startup)
            steps = []
            for _ in range(3):
                l1, l2, w, b = exe.run(main, feed={"x": X, "label": LABEL}, fetch_list=list(losses) + ["w", "b"])
                steps.append([float(np.array(l1).reshape(-1)[0]), float(np.array(l2).reshape(-1)[0]),
                              np.array(w).tolist(), np.array(b).tolist()])
        rec["steps"] = steps
    return rec


CASES = ("two_backwards", "three_backwards", "two_minimizes")


def main():
    import paddle.fluid as fluid
    out = {case: record(fluid, case) for case in CASES}
    with open(os.path.join(HERE, "backward_twice.json"), "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print("wrote", list(out))


if __name__ == "__main__":
    main()
