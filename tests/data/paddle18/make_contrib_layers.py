"""Records Paddle 1.8.5's partial_sum / partial_concat numbers, forward and gradients (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_contrib_layers.py

Writes contrib_layers.json beside this script.
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
A = (np.arange(12, dtype="float32").reshape(3, 4) - 4.0) / 3.0
B = np.linspace(-2.0, 2.0, 12, dtype="float32").reshape(3, 4)


def case(layer, **attrs):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        a = fluid.layers.data("a", shape=[3, 4], dtype="float32", append_batch_size=False)
        b = fluid.layers.data("b", shape=[3, 4], dtype="float32", append_batch_size=False)
        a.stop_gradient = b.stop_gradient = False
        out = getattr(fluid.contrib.layers, layer)([a, b], **attrs)
        w = np.linspace(-1.0, 1.5, int(np.prod(out.shape)), dtype="float32").reshape(out.shape)
        wv = fluid.layers.assign(w)
        ga, gb = fluid.gradients([fluid.layers.reduce_sum(out * wv)], [a, b])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    o, g1, g2 = exe.run(main, feed={"a": A, "b": B}, fetch_list=[out, ga, gb])
    return {"layer": layer, "attrs": attrs, "out": o.tolist(), "grad_a": g1.tolist(), "grad_b": g2.tolist()}


cases = [case("partial_sum"), case("partial_sum", start_index=1, length=2), case("partial_concat"),
         case("partial_concat", start_index=2, length=1), case("partial_concat", start_index=1)]
with open(os.path.join(HERE, "contrib_layers.json"), "w") as f:
    json.dump({"a": A.tolist(), "b": B.tolist(), "cases": cases}, f)
print("wrote", len(cases))
