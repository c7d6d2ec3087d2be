"""Records tensor_array_to_tensor (concat and stack) forward, OutIndex and gradients from real PaddlePaddle 1.8.5
(run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_tensor_array.py

Writes tensor_array.json beside this script; tests/unit/test_tensor_array_paddle18.py runs the same case code on
paddle_compat.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# (element shapes, axis, use_stack)
CASES = [([(2, 3), (2, 1), (2, 2)], 1, False), ([(1, 3), (2, 3)], 0, False), ([(2, 3), (2, 3), (2, 3)], 0, True),
         ([(2, 3), (2, 3)], 1, True), ([(2, 2, 3), (2, 1, 3)], -2, False)]


def run(fluid, shapes, axis, use_stack):
    main, startup = fluid.Program(), fluid.Program()
    feed, xs = {}, []
    with fluid.program_guard(main, startup):
        arr = fluid.layers.create_array("float32")
        for j, shp in enumerate(shapes):
            x = fluid.layers.data("x%d" % j, shape=list(shp), dtype="float32", append_batch_size=False)
            x.stop_gradient = False
            xs.append(x)
            feed[x.name] = np.random.RandomState(j).uniform(-1, 1, shp).astype("float32")
            fluid.layers.array_write(x * 1.0, fluid.layers.fill_constant([1], "int64", j), arr)
        out, index = fluid.layers.tensor_array_to_tensor(arr, axis=axis, use_stack=use_stack)
        loss = fluid.layers.reduce_sum(out * out * 0.5 + out)
        grads = fluid.gradients([loss], xs)
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        r = exe.run(main, feed=feed, fetch_list=[out, index] + grads)
    return {"out": np.array(r[0]).tolist(), "index": np.array(r[1]).tolist(),
            "grads": [np.array(g).tolist() for g in r[2:]]}


if __name__ == "__main__":
    import paddle.fluid as fluid
    res = [run(fluid, *c) for c in CASES]
    with open(os.path.join(HERE, "tensor_array.json"), "w") as f:
        json.dump(res, f)
    print("wrote", len(res), "cases")
