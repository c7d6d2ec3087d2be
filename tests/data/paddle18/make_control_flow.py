"""Records control-flow numbers (While over a LoDTensorArray, cond on a fed scalar, a running product in a
While loop) from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_control_flow.py

Writes control_flow.json beside this script. The programs are built by the functions below, which take
the fluid module: tests/unit/test_control_flow_paddle18.py builds the very same programs with
paddle_compat. Each case fetches its outputs and the gradient of sum(out * W) w.r.t. the fed x.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
X = (np.arange(12, dtype="float32").reshape(4, 3) - 5.0) / 7.0
W = np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(4, 3)


def _inputs(fluid):
    L = fluid.layers
    x = L.data("x", shape=[4, 3], dtype="float32", append_batch_size=False)
    x.stop_gradient = False
    w = L.data("w", shape=[4, 3], dtype="float32", append_batch_size=False)
    return x, w


def while_array_sum(fluid):
    """Writes x * (k + 1) for k < 4 into an array in one While, sums the array in a second."""
    L = fluid.layers
    x, w = _inputs(fluid)
    arr = L.create_array("float32")
    i = L.fill_constant([1], "int64", 0)
    n = L.fill_constant([1], "int64", 4)
    c = L.less_than(i, n)
    loop = L.While(c)
    with loop.block():
        k = L.cast(i, "float32")
        L.array_write(L.elementwise_mul(x, L.scale(k, bias=1.0)), i, array=arr)
        L.increment(i, 1.0, in_place=True)
        L.less_than(i, n, cond=c)
    j = L.fill_constant([1], "int64", 0)
    acc = L.fill_constant([4, 3], "float32", 0.0)
    length = L.array_length(arr)
    c2 = L.less_than(j, length)
    loop2 = L.While(c2)
    with loop2.block():
        L.assign(L.elementwise_add(acc, L.array_read(arr, j)), acc)
        L.increment(j, 1.0, in_place=True)
        L.less_than(j, length, cond=c2)
    return x, w, [acc, length]


def cond_on_scalar(fluid):
    """cond(p > 0, tanh(x) * 2, x * x - 1) on a fed scalar p."""
    L = fluid.layers
    x, w = _inputs(fluid)
    p = L.data("p", shape=[1], dtype="float32", append_batch_size=False)
    zero = L.fill_constant([1], "float32", 0.0)
    out = L.cond(L.greater_than(p, zero), lambda: L.scale(L.tanh(x), 2.0), lambda: L.elementwise_mul(x, x) - 1.0)
    return x, w, [out]


def running_product(fluid):
    """prod = prod * (x + 0.5 * i) for i < 3, in a While loop."""
    L = fluid.layers
    x, w = _inputs(fluid)
    i = L.fill_constant([1], "int64", 0)
    n = L.fill_constant([1], "int64", 3)
    prod = L.fill_constant([4, 3], "float32", 1.0)
    c = L.less_than(i, n)
    loop = L.While(c)
    with loop.block():
        f = L.scale(L.cast(i, "float32"), 0.5)
        L.assign(L.elementwise_mul(prod, L.elementwise_add(x, f)), prod)
        L.increment(i, 1.0, in_place=True)
        L.less_than(i, n, cond=c)
    return x, w, [prod]


def while_loop_power(fluid):
    """while_loop over (i, y): y = y * x + 0.25 three times from y = x (Paddle's functional loop)."""
    L = fluid.layers
    x, w = _inputs(fluid)
    i = L.fill_constant([1], "int64", 0)
    n = L.fill_constant([1], "int64", 3)
    y = L.scale(x, 1.0)

    def body(i, y):
        return [L.increment(i, 1.0, in_place=False), L.scale(L.elementwise_mul(y, x), 1.0, bias=0.25)]

    i, y = L.while_loop(lambda i, y: L.less_than(i, n), body, [i, y])
    return x, w, [y]


CASES = {"while_array_sum": (while_array_sum, [{}]),
         "cond_on_scalar": (cond_on_scalar, [{"p": [1.5]}, {"p": [-0.5]}]),
         "running_product": (running_product, [{}]),
         "while_loop_power": (while_loop_power, [{}])}


def run_case(fluid, name, extra_feed, with_grad=True):
    """(outputs, grad of sum(out0 * W) w.r.t. x or None) for one case and feed."""
    build, _ = CASES[name]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x, w, outs = build(fluid)
        fetch = list(outs)
        if with_grad:
            loss = fluid.layers.reduce_sum(fluid.layers.elementwise_mul(outs[0], w))
            grads = fluid.gradients([loss], [x])
            if not grads or grads[0] is None:   # Paddle finds no gradient path (see the test module)
                with_grad = False
            else:
                fetch.append(grads[0])
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        feed = {"x": X, "w": W}
        feed.update({k: np.array(v, "float32") for k, v in extra_feed.items()})
        res = exe.run(main, feed=feed, fetch_list=fetch)
    res = [np.asarray(r) for r in res]
    return (res[:-1], res[-1]) if with_grad else (res, None)


def main():
    import paddle.fluid as fluid
    out = {"x": X.tolist(), "w": W.tolist(), "cases": []}
    for name, (_, feeds) in CASES.items():
        for extra in feeds:
            outs, gx = run_case(fluid, name, extra)
            out["cases"].append({"name": name, "feed": extra, "outs": [o.tolist() for o in outs],
                                 "grad_x": None if gx is None else gx.tolist()})
    with open(os.path.join(HERE, "control_flow.json"), "w") as f:
        json.dump(out, f)
    print("wrote", len(out["cases"]), "cases")


if __name__ == "__main__":
    main()
