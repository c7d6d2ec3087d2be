"""Records sequence_slice, sequence_reshape, sequence_scatter, sequence_enumerate, row_conv and im2sequence
forward and gradient numbers from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_seq_more.py

Writes seq_more.json beside this script: per case the output (and its LoD) and the gradients of
sum(out * out / 2 + out) w.r.t. the float inputs and the parameters (fixed values, stored). The case code takes
the fluid module as an argument; tests/unit/test_seq_more_paddle18.py runs it on paddle_compat.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def vals(shape, seed, dtype="float32"):
    return np.random.RandomState(seed).uniform(-0.8, 0.8, size=shape).astype(dtype)


def ints(shape, seed, hi):
    return np.random.RandomState(seed).randint(0, hi, size=shape).astype("int64")


NO_GRAD = ("image_size",)

# (kind, layer kwargs, inputs: [(name, array, sequence lengths or None)])
CASES = [
    ("sequence_slice", {}, [("x", vals((10, 3), 1), [3, 1, 4, 2]),
                            ("offset", np.array([[0], [0], [1], [1]], "int64"), None),
                            ("length", np.array([[2], [1], [3], [1]], "int64"), None)]),
    ("sequence_slice", {}, [("x", vals((6, 2), 2), [4, 2]),
                            ("offset", np.array([[2], [0]], "int64"), None),
                            ("length", np.array([[2], [2]], "int64"), None)]),
    ("sequence_reshape", {"new_dim": 2}, [("x", vals((10, 4), 3), [3, 1, 4, 2])]),
    ("sequence_reshape", {"new_dim": 4}, [("x", vals((6, 6), 4), [2, 4])]),
    ("sequence_reshape", {"new_dim": 12}, [("x", vals((6, 6), 4), [2, 4])]),
    ("sequence_scatter", {}, [("x", vals((3, 6), 5), None),
                              ("index", np.array([[0], [1], [2], [5], [4], [3], [2], [1], [3], [2], [5], [4]],
                                                 "int64"), [3, 5, 4]),
                              ("updates", vals((12, 1), 6), [3, 5, 4])]),
    ("sequence_scatter", {}, [("x", vals((2, 4), 7), None),
                              ("index", np.array([[1], [1], [3], [0], [0]], "int64"), [3, 2]),
                              ("updates", vals((5, 1), 8), [3, 2])]),
    ("sequence_enumerate", {"win_size": 2}, [("x", ints((9, 1), 9, 20), [3, 1, 5])]),
    ("sequence_enumerate", {"win_size": 3, "pad_value": 7}, [("x", ints((9, 1), 10, 20), [3, 1, 5])]),
    ("row_conv", {"future_context_size": 2}, [("x", vals((10, 4), 11), [3, 1, 4, 2])]),
    ("row_conv", {"future_context_size": 1, "act": "tanh"}, [("x", vals((7, 3), 12), [5, 2])]),
    ("row_conv", {"future_context_size": 0}, [("x", vals((5, 3), 13), [2, 3])]),
    ("row_conv", {"future_context_size": 2}, [("x", vals((2, 5, 4), 20), None)]),
    ("im2sequence", {"filter_size": 2}, [("x", vals((2, 3, 4, 5), 14), None)]),
    ("im2sequence", {"filter_size": [3, 2], "stride": [2, 1], "padding": [1, 0]},
     [("x", vals((2, 2, 5, 4), 15), None)]),
    ("im2sequence", {"filter_size": 2, "stride": 2, "padding": [1, 0, 0, 1]}, [("x", vals((1, 2, 5, 5), 16), None)]),
    ("im2sequence", {"filter_size": 2, "out_stride": 1},
     [("x", vals((3, 2, 5, 6), 17), None), ("image_size", np.array([[5, 6], [3, 4], [4, 2]], "float32"), None)]),
    ("im2sequence", {"filter_size": [2, 3], "stride": [1, 2], "padding": 1, "out_stride": [2, 1]},
     [("x", vals((2, 1, 6, 7), 18), None), ("image_size", np.array([[7, 5], [4, 7]], "float32"), None)]),
    ("im2sequence", {"filter_size": 2, "out_stride": 2},
     [("x", vals((1, 2, 4, 4), 19), None), ("image_size", np.array([[2, 2]], "float32"), None)]),
]


def run(fluid, kind, kw, inputs, params=None):
    main, startup = fluid.Program(), fluid.Program()
    place = fluid.CPUPlace()
    with fluid.program_guard(main, startup):
        vs, feed = {}, {}
        for name, arr, lens in inputs:
            v = fluid.layers.data(name, shape=list(arr.shape[1:]), dtype=str(arr.dtype), lod_level=1 if lens else 0)
            v.stop_gradient = arr.dtype.kind != "f" or name in NO_GRAD
            vs[name] = v
            feed[name] = fluid.create_lod_tensor(arr, [lens], place) if lens else arr
        if kind == "sequence_slice":
            out = fluid.layers.sequence_slice(vs["x"], vs["offset"], vs["length"])
        elif kind == "sequence_reshape":
            out = fluid.layers.sequence_reshape(vs["x"], **kw)
        elif kind == "sequence_scatter":
            out = fluid.layers.sequence_scatter(vs["x"], vs["index"], vs["updates"])
        elif kind == "sequence_enumerate":
            out = fluid.layers.sequence_enumerate(vs["x"], **kw)
        elif kind == "row_conv":
            out = fluid.layers.row_conv(vs["x"], param_attr=fluid.ParamAttr(name="w"), **kw)
        else:
            out = fluid.layers.im2sequence(vs["x"], input_image_size=vs.get("image_size"), **kw)
        wrt = [vs[n] for n, a, _ in inputs if a.dtype.kind == "f" and n not in NO_GRAD]
        wrt += list(main.global_block().all_parameters())
        grads = []
        # no gradient for sequence_enumerate (ids) nor for im2sequence with image sizes (Paddle 1.8.5's
        # im2sequence_grad fails there: it sizes the gradient for the full image)
        if kind != "sequence_enumerate" and "image_size" not in vs:
            loss = fluid.layers.reduce_sum(out * out * 0.5 + out)
            grads = fluid.gradients([loss], wrt)
    exe = fluid.Executor(place)
    res = {"params": {}}
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        for i, p in enumerate(main.global_block().all_parameters()):
            t = fluid.global_scope().find_var(p.name).get_tensor()
            v = np.array(params[p.name], "float32") if params else vals(np.array(t).shape, 40 + i)
            t.set(v, place)
            res["params"][p.name] = v.tolist()
        r = exe.run(main, feed=feed, fetch_list=[out] + grads, return_numpy=False)
    res["out"] = np.array(r[0]).tolist()
    res["lod"] = [list(map(int, l)) for l in r[0].lod()]
    res["grads"] = {v.name: np.array(g).tolist() for v, g in zip(wrt, r[1:])}
    return res


if __name__ == "__main__":
    import paddle.fluid as fluid
    out = [run(fluid, kind, kw, inputs) for kind, kw, inputs in CASES]
    with open(os.path.join(HERE, "seq_more.json"), "w") as f:
        json.dump(out, f)
    print("wrote", len(out), "cases")
