"""Records dynamic_lstm / dynamic_gru / gru_unit forward and gradient numbers from real PaddlePaddle 1.8.5
(run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_rnn.py

Writes rnn.json beside this script: fixed LoD input and parameters (set through the scope after startup),
the outputs, and the gradients of sum(out * w) for a fixed w with respect to the input, the initial states and
the parameters.
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
H = 3
LENS = [3, 1, 4]
T = sum(LENS)


def vals(shape, seed):
    r = np.random.RandomState(seed)
    return (r.uniform(-0.8, 0.8, size=shape)).astype("float32")


def build(kind, attrs, with_init):
    x_width = {"lstm": 4 * H, "gru": 3 * H, "gru_unit": 3 * H}[kind]
    lod = kind != "gru_unit"
    x = fluid.layers.data("x", shape=[x_width], dtype="float32", lod_level=1 if lod else 0)
    x.stop_gradient = False
    n = len(LENS) if lod else 4
    ins = {"x": x}
    if with_init:
        h0 = fluid.layers.data("h0", shape=[H], dtype="float32")
        h0.stop_gradient = False
        ins["h0"] = h0
    pa, ba = fluid.ParamAttr(name="w_" + kind), fluid.ParamAttr(name="b_" + kind)
    if kind == "lstm":
        c0 = None
        if with_init:
            c0 = fluid.layers.data("c0", shape=[H], dtype="float32")
            c0.stop_gradient = False
            ins["c0"] = c0
        h, c = fluid.layers.dynamic_lstm(x, 4 * H, h_0=ins.get("h0"), c_0=c0, param_attr=pa, bias_attr=ba, **attrs)
        outs = [h, c]
    elif kind == "gru":
        outs = [fluid.layers.dynamic_gru(x, H, param_attr=pa, bias_attr=ba, h_0=ins.get("h0"), **attrs)]
    else:
        outs = list(fluid.layers.gru_unit(x, ins["h0"], 3 * H, param_attr=pa, bias_attr=ba, **attrs))
    return ins, outs, n, x_width


def case(kind, attrs, with_init=False):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        ins, outs, n, x_width = build(kind, attrs, with_init)
        loss = 0
        for i, o in enumerate(outs):
            wv = fluid.layers.fill_constant(shape=[1], dtype="float32", value=0.5 + 0.25 * i)
            loss = loss + fluid.layers.reduce_sum(fluid.layers.elementwise_mul(o, o * wv) + o)
        params = ["w_" + kind, "b_" + kind]
        wrt = list(ins.values()) + [main.global_block().var(p) for p in params]
        grads = fluid.gradients([loss], wrt)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        pvals = {}
        for i, p in enumerate(params):
            t = scope.find_var(p).get_tensor()
            v = vals(np.array(t).shape, 10 + i)
            t.set(v, fluid.CPUPlace())
            pvals[p] = v.tolist()
        rows = T if kind != "gru_unit" else n
        xv = vals((rows, x_width), 1)
        feed = {"x": fluid.create_lod_tensor(xv, [LENS], fluid.CPUPlace()) if kind != "gru_unit" else xv}
        fv = {"x": xv.tolist()}
        for j, k in enumerate(["h0", "c0"]):
            if k in ins:
                v = vals((n, H), 3 + j)
                feed[k] = v
                fv[k] = v.tolist()
        res = exe.run(main, feed=feed, fetch_list=outs + grads, return_numpy=False)
    res = [np.array(r).tolist() for r in res]
    return {"kind": kind, "attrs": attrs, "with_init": with_init, "params": pvals, "feed": fv,
            "outs": res[:len(outs)], "grads": dict(zip([v.name for v in wrt], res[len(outs):]))}


cases = [
    case("lstm", {}),
    case("lstm", {"use_peepholes": False, "is_reverse": True}),
    case("lstm", {}, True),
    case("lstm", {"is_reverse": True}, True),
    case("lstm", {"use_peepholes": False}, True),
    case("lstm", {"gate_activation": "tanh", "cell_activation": "relu", "candidate_activation": "sigmoid"}, True),
    case("gru", {}),
    case("gru", {"is_reverse": True, "origin_mode": True}, True),
    case("gru", {"gate_activation": "tanh", "candidate_activation": "relu"}),
    case("gru_unit", {}, True),
    case("gru_unit", {"origin_mode": True}, True),
]
with open(os.path.join(HERE, "rnn.json"), "w") as f:
    json.dump({"lens": LENS, "hidden": H, "cases": cases}, f)
print("wrote", len(cases), "cases")
