"""Records cumsum forward and gradient numbers from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_cumsum.py

Writes cumsum.json beside this script. The template for recording an op's numbers: fixed inputs, every
attribute combination that matters, the forward output and the gradient of sum(out * w) for a fixed w.
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
X = np.arange(1, 13, dtype="float32").reshape(3, 4) / 7.0
W = np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(3, 4)


def case(**attrs):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3, 4], dtype="float32", append_batch_size=False)
        x.stop_gradient = False
        w = fluid.layers.data("w", shape=[3, 4], dtype="float32", append_batch_size=False)
        out = fluid.layers.cumsum(x, **attrs)
        loss = fluid.layers.reduce_sum(out * w)
        gx, = fluid.gradients([loss], [x])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    o, g = exe.run(main, feed={"x": X, "w": W}, fetch_list=[out, gx])
    return {"attrs": attrs, "out": o.tolist(), "grad_x": g.tolist()}


cases = [case(), case(axis=0), case(axis=1, exclusive=True), case(axis=0, reverse=True),
         case(axis=-1, exclusive=True, reverse=True)]
with open(os.path.join(HERE, "cumsum.json"), "w") as f:
    json.dump({"x": X.tolist(), "w": W.tolist(), "cases": cases}, f)
print("wrote", len(cases), "cases")
