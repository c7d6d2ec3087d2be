"""Paddle 1.8.5's float32/float64 sums and means, bit for bit (they depend on the order Eigen adds in): reduce_sum,
reduce_mean (all, trailing, leading, middle and mixed dims), mean, clip_by_norm and squared_l2_norm.
Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_eigen_reduce.py

run_case(fluid, name) runs unchanged on paddle_compat in tests/unit/test_eigen_reduce_paddle18.py.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def data(shape, seed, dtype="float32"):
    rs = np.random.RandomState(seed)
    # mixed magnitudes and signs: a different order of additions shows in the last bits
    return (rs.uniform(-1, 1, shape) ** 3 * 10 ** rs.uniform(-2, 2, shape)).astype(dtype)


# name -> (layer, shape, dtype, kwargs)
CASES = {
    "sum_all_7": ("reduce_sum", [7], "float32", {}),
    "sum_all_13": ("reduce_sum", [13], "float32", {}),
    "sum_all_1001": ("reduce_sum", [1001], "float32", {}),
    "sum_all_100003": ("reduce_sum", [100003], "float32", {}),
    "sum_all_3d": ("reduce_sum", [3, 1000, 7], "float32", {}),
    "sum_all_keep": ("reduce_sum", [30, 41], "float32", {"keep_dim": True}),
    "sum_last": ("reduce_sum", [5, 1003], "float32", {"dim": [-1]}),
    "sum_last_keep": ("reduce_sum", [5, 1003], "float32", {"dim": [1], "keep_dim": True}),
    "sum_last2": ("reduce_sum", [4, 33, 17], "float32", {"dim": [1, 2]}),
    "sum_first": ("reduce_sum", [1003, 5], "float32", {"dim": [0]}),
    "sum_first_wide": ("reduce_sum", [517, 33], "float32", {"dim": [0]}),
    "sum_middle": ("reduce_sum", [6, 300, 9], "float32", {"dim": [1]}),
    "sum_first_and_last": ("reduce_sum", [40, 3, 23], "float32", {"dim": [0, 2]}),
    "sum_first_two": ("reduce_sum", [40, 23, 3], "float32", {"dim": [0, 1]}),
    "sum_all_f64": ("reduce_sum", [1001], "float64", {}),
    "sum_last_f64": ("reduce_sum", [5, 1003], "float64", {"dim": [-1]}),
    "mean_all": ("reduce_mean", [1001], "float32", {}),
    "mean_all_2d": ("reduce_mean", [300, 77], "float32", {}),
    "mean_last": ("reduce_mean", [5, 1003], "float32", {"dim": [-1]}),
    "mean_first": ("reduce_mean", [1003, 5], "float32", {"dim": [0]}),
    "mean_op": ("mean", [1001], "float32", {}),
    "mean_op_2d": ("mean", [40, 77], "float32", {}),
    "clip_by_norm": ("clip_by_norm", [1001], "float32", {"max_norm": 0.5}),
    "squared_l2_norm": ("squared_l2_norm", [300, 77], "float32", {}),
}


def run_case(fluid, name):
    layer, shape, dtype, kw = CASES[name]
    x_np = data(shape, sum(map(ord, name)), dtype)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=shape, dtype=dtype, append_batch_size=False)
        x.stop_gradient = False
        if layer == "squared_l2_norm":
            out = main.global_block().create_var(name="sq_out", dtype=dtype, shape=[1])
            main.global_block().append_op(type="squared_l2_norm", inputs={"X": [x]}, outputs={"Out": [out]})
        elif layer == "mean":
            out = fluid.layers.mean(x)
        elif layer == "clip_by_norm":
            out = fluid.layers.clip_by_norm(x, **kw)
        else:
            out = getattr(fluid.layers, layer)(x, **kw)
        fetch = [out]
        if layer in ("reduce_mean", "mean"):
            fetch += fluid.gradients([fluid.layers.reduce_sum(out)], [x])
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        res = exe.run(main, feed={"x": x_np}, fetch_list=fetch)
    out = np.asarray(res[0])
    r = {"shape": list(out.shape), "bits": out.view("uint32" if out.dtype == np.float32 else "uint64").ravel().tolist()}
    if len(res) > 1:
        g = np.asarray(res[1])
        r["grad_bits"] = sorted(set(g.view("uint32" if g.dtype == np.float32 else "uint64").ravel().tolist()))
    return r


if __name__ == "__main__":
    import paddle.fluid as fluid
    rec = {name: run_case(fluid, name) for name in CASES}
    with open(os.path.join(HERE, "eigen_reduce.json"), "w") as fh:
        json.dump(rec, fh, sort_keys=True)
    print("wrote", len(rec))
