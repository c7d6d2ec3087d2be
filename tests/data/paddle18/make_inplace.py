"""Paddle 1.8.5's behaviour for every layer that reshapes in place (reshape(inplace=True), and npair_loss and roll,
which call it so) plus paddle.compat's inplace= helpers. Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_inplace.py

run_all(fluid) runs unchanged on paddle_compat in tests/unit/test_inplace_paddle18.py.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
X = np.random.RandomState(3).uniform(-1, 1, (2, 4, 6)).astype("float32")
W1 = np.random.RandomState(4).uniform(-0.5, 0.5, (6, 5)).astype("float32")
W2 = np.random.RandomState(5).uniform(-0.5, 0.5, (20, 3)).astype("float32")
A = np.random.RandomState(6).uniform(-1, 1, (4, 3)).astype("float32")
P = np.random.RandomState(7).uniform(-1, 1, (4, 3)).astype("float32")
LAB = np.array([1, 0, 1, 2], "float32")
R = np.arange(12, dtype="float32").reshape(3, 4)


def _init(fluid, arr):
    return fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(arr))


def _vars(block, vs):
    return {v.name: list(v.shape) for v in vs}


def case_matmul(fluid):
    """A script's pattern: h = fc(x); h = reshape(h, [-1, 20], inplace=True); matmul(h, w): forward and grads."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[4, 6], dtype="float32")
        x.stop_gradient = False
        h = fluid.layers.fc(x, 5, num_flatten_dims=2, param_attr=_init(fluid, W1), bias_attr=False)
        before = list(h.shape)
        r = fluid.layers.reshape(h, [-1, 20], inplace=True)
        w = fluid.layers.create_parameter([20, 3], "float32", attr=_init(fluid, W2))
        out = fluid.layers.matmul(r, w)
        loss = fluid.layers.reduce_sum(fluid.layers.square(out))
        grads = fluid.gradients([loss], [x, main.global_block().all_parameters()[0], w])
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        res = exe.run(main, feed={"x": X}, fetch_list=[out, r, loss] + grads)
    return {"same": r is h, "before": before, "after": list(h.shape), "out_shape": list(out.shape),
            "out": res[0].tolist(), "r": res[1].tolist(), "loss": float(np.array(res[2]).ravel()[0]),
            "grad_x": res[3].tolist(), "grad_w1": res[4].tolist(), "grad_w2": res[5].tolist()}


def case_act_and_zero(fluid):
    """inplace with act (the act writes a new variable) and with 0 / -1 in the shape."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        a = fluid.layers.fill_constant([2, 3], "float32", -1.5)
        b = fluid.layers.reshape(a, [3, 2], inplace=True, act="relu")
        c = fluid.layers.fill_constant([2, 3, 4], "float32", 2.0)
        d = fluid.layers.reshape(c, [0, -1], inplace=True)
        e = fluid.layers.reshape(d, [0, 4, -1], inplace=True)
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        res = exe.run(main, fetch_list=[a, b, c, e])
    return {"b_is_a": b is a, "a_shape": list(a.shape), "b_shape": list(b.shape), "d_is_c": d is c,
            "e_is_c": e is c, "c_shape": list(c.shape),
            "fetched": [list(np.array(v).shape) for v in res], "sums": [float(np.array(v).sum()) for v in res]}


def case_npair_roll(fluid):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        a = fluid.layers.data("a", shape=[4, 3], dtype="float32", append_batch_size=False)
        p = fluid.layers.data("p", shape=[4, 3], dtype="float32", append_batch_size=False)
        lab = fluid.layers.data("lab", shape=[4], dtype="float32", append_batch_size=False)
        loss = fluid.layers.npair_loss(a, p, lab)
        r = fluid.layers.data("r", shape=[3, 4], dtype="float32", append_batch_size=False)
        rolled = fluid.layers.roll(r, shifts=5)
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        res = exe.run(main, feed={"a": A, "p": P, "lab": LAB, "r": R}, fetch_list=[loss, rolled, r])
    return {"lab_shape": list(lab.shape), "loss": float(np.array(res[0]).ravel()[0]),
            "rolled_shape": list(rolled.shape), "rolled": np.array(res[1]).tolist(), "r_after": np.array(res[2]).tolist()}


def _norm(obj):
    if isinstance(obj, (set, frozenset)):
        return ["set"] + sorted(_norm(x) for x in obj)
    if isinstance(obj, dict):
        return ["dict"] + sorted([_norm(k), _norm(v)] for k, v in obj.items())
    if isinstance(obj, list):
        return ["list"] + [_norm(x) for x in obj]
    if isinstance(obj, bytes):
        return "b:" + obj.decode("latin-1")
    return "%s:%s" % (type(obj).__name__, obj)


def case_compat():
    import paddle.compat as cpt
    out = []
    for fname in ("to_text", "to_bytes"):
        f = getattr(cpt, fname)
        for obj in ([b"a", "b"], {b"a", "b"}, {b"k": b"v", "s": 1}, b"x", "y", 3, 2.5, True, None):
            for inplace in (False, True):
                o = obj.copy() if hasattr(obj, "copy") else obj
                try:
                    r = f(o, inplace=inplace)
                    out.append([fname, _norm(obj), inplace, _norm(r), r is o and isinstance(o, (list, set, dict))])
                except AttributeError as e:
                    out.append([fname, _norm(obj), inplace, "AttributeError", False])
    return out


def run_all(fluid):
    return {"matmul": case_matmul(fluid), "act_and_zero": case_act_and_zero(fluid),
            "npair_roll": case_npair_roll(fluid), "compat": case_compat()}


if __name__ == "__main__":
    import paddle.fluid as fluid
    result = run_all(fluid)
    with open(os.path.join(HERE, "inplace.json"), "w") as fh:
        json.dump(result, fh, indent=0, sort_keys=True)
    print("wrote inplace.json")
