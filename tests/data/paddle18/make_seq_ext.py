"""Records sequence_conv, nets.sequence_conv_pool and cos_sim forward and gradient numbers from real
PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_seq_ext.py

Writes seq_ext.json beside this script (fixed LoD input, parameters set through the scope after startup,
outputs and gradients of sum(out * out / 2 + out) w.r.t. inputs and parameters).
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
LENS = [3, 1, 5, 2]
D = 4


def vals(shape, seed):
    return np.random.RandomState(seed).uniform(-0.8, 0.8, size=shape).astype("float32")


def build(kind, attrs):
    """Shared with the test: returns (data vars, output)."""
    if kind == "cos_sim":
        x = fluid.layers.data("x", shape=[D], dtype="float32")
        if attrs.get("ybatch", True):
            y = fluid.layers.data("y", shape=[D], dtype="float32")
        else:
            y = fluid.layers.data("y", shape=[1, D], dtype="float32", append_batch_size=False)
        x.stop_gradient = y.stop_gradient = False
        return [x, y], fluid.layers.cos_sim(x, y)
    x = fluid.layers.data("x", shape=[D], dtype="float32", lod_level=1)
    x.stop_gradient = False
    pa, ba = fluid.ParamAttr(name="w"), fluid.ParamAttr(name="b")
    if kind == "sequence_conv":
        return [x], fluid.layers.sequence_conv(x, param_attr=pa, bias_attr=ba, **attrs)
    return [x], fluid.nets.sequence_conv_pool(x, param_attr=pa, bias_attr=ba, **attrs)


def feeds(kind, attrs, lod_tensor):
    if kind == "cos_sim":
        return {"x": vals((5, D), 1), "y": vals((5 if attrs.get("ybatch", True) else 1, D), 2)}
    xv = vals((sum(LENS), D), 1)
    return {"x": lod_tensor(xv, [LENS])}, xv


def case(kind, attrs):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        ins, out = build(kind, attrs)
        loss = fluid.layers.reduce_sum(out * out * 0.5 + out)
        params = [p.name for p in main.global_block().all_parameters()]
        wrt = ins + [main.global_block().var(p) for p in params]
        grads = fluid.gradients([loss], wrt)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        pvals = {}
        for i, p in enumerate(sorted(params)):
            t = scope.find_var(p).get_tensor()
            v = vals(np.array(t).shape, 10 + i)
            t.set(v, fluid.CPUPlace())
            pvals[p] = v.tolist()
        if kind == "cos_sim":
            feed = feeds(kind, attrs, None)
            fv = {k: v.tolist() for k, v in feed.items()}
        else:
            feed, xv = feeds(kind, attrs, lambda a, l: fluid.create_lod_tensor(a, l, fluid.CPUPlace()))
            fv = {"x": xv.tolist()}
        res = [np.array(r).tolist() for r in exe.run(main, feed=feed, fetch_list=[out] + grads, return_numpy=False)]
    return {"kind": kind, "attrs": attrs, "params": pvals, "feed": fv, "out": res[0],
            "grads": dict(zip([v.name for v in wrt], res[1:]))}


def all_cases():
    return [
        case("sequence_conv", {"num_filters": 3}),
        case("sequence_conv", {"num_filters": 2, "filter_size": 4, "act": "tanh"}),
        case("sequence_conv", {"num_filters": 2, "filter_size": 2, "padding_start": 0}),
        case("sequence_conv_pool", {"num_filters": 3, "filter_size": 3}),
        case("sequence_conv_pool", {"num_filters": 2, "filter_size": 5, "act": "tanh", "pool_type": "sum"}),
        case("cos_sim", {}),
        case("cos_sim", {"ybatch": False}),
    ]


if __name__ == "__main__":
    cases = all_cases()
    with open(os.path.join(HERE, "seq_ext.json"), "w") as f:
        json.dump({"lens": LENS, "cases": cases}, f)
    print("wrote", len(cases), "cases")
