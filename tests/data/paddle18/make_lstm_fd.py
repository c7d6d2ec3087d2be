"""Where Paddle 1.8.5 is wrong: its CPU dynamic_lstm gradient when the hidden size is a multiple of 8 (its
vectorized kernel path). Records, for H = 7 and H = 8, Paddle's forward loss, its analytic gradient w.r.t. the
input, and the central finite differences of Paddle's own forward (float32, eps 1e-3). Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_lstm_fd.py

run(fluid, H, X) runs unchanged on paddle_compat in tests/unit/test_lstm_fd_paddle18.py.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LENS = [3, 2]
EPS = 1e-3


def inputs(H):
    rs = np.random.RandomState(0)
    X = rs.uniform(-0.8, 0.8, (sum(LENS), 4 * H)).astype("float32")
    W = rs.uniform(-0.5, 0.5, (H, 4 * H)).astype("float32")
    B = rs.uniform(-0.5, 0.5, (1, 7 * H)).astype("float32")
    return X, W, B


def make(fluid, H):
    """-> f(x array, want_grad) giving (loss, d loss / d x or None); loss = sum(hidden^2)."""
    _, W, B = inputs(H)
    init = fluid.initializer.NumpyArrayInitializer
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [4 * H], dtype="float32", lod_level=1)
        x.stop_gradient = False
        h, _ = fluid.layers.dynamic_lstm(x, 4 * H, param_attr=fluid.ParamAttr(name="w", initializer=init(W)),
                                         bias_attr=fluid.ParamAttr(name="b", initializer=init(B)))
        loss = fluid.layers.reduce_sum(h * h)
        gx, = fluid.gradients([loss], [x])
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)

    def f(xv, want_grad=False):
        with fluid.scope_guard(scope):
            r = exe.run(main, feed={"x": fluid.create_lod_tensor(xv, [LENS], fluid.CPUPlace())},
                        fetch_list=[loss, gx] if want_grad else [loss])
        return float(np.array(r[0]).ravel()[0]), (np.array(r[1]) if want_grad else None)
    return f


def finite_differences(f, X):
    fd = np.zeros(X.shape, "float64")
    for idx in np.ndindex(*X.shape):
        xp, xm = X.copy(), X.copy()
        xp[idx] += EPS
        xm[idx] -= EPS
        fd[idx] = (f(xp)[0] - f(xm)[0]) / (2 * EPS)
    return fd


if __name__ == "__main__":
    import paddle.fluid as fluid
    rec = {}
    for H in (7, 8):
        X = inputs(H)[0]
        f = make(fluid, H)
        loss, grad = f(X, True)
        rec[str(H)] = {"loss": loss, "grad": grad.tolist(), "fd": finite_differences(f, X).tolist()}
        print("H=%d: |analytic - fd| max %.3g of %.3g" % (H, np.abs(grad - rec[str(H)]["fd"]).max(),
                                                         np.abs(rec[str(H)]["fd"]).max()))
    with open(os.path.join(HERE, "lstm_fd.json"), "w") as fh:
        json.dump(rec, fh)
