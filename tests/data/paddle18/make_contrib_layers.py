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


def fused(functors, y_shape=(3, 4), **attrs):
    main, startup = fluid.Program(), fluid.Program()
    yv = B[:, :y_shape[-1]][:y_shape[0]] if len(y_shape) == 2 else B[0, :y_shape[0]]
    with fluid.program_guard(main, startup):
        a = fluid.layers.data("a", shape=[3, 4], dtype="float32", append_batch_size=False)
        b = fluid.layers.data("b", shape=list(y_shape), dtype="float32", append_batch_size=False)
        a.stop_gradient = b.stop_gradient = False
        out = fluid.contrib.layers.fused_elemwise_activation(a, b, functors, **attrs)
        w = np.linspace(-1.0, 1.5, 12, dtype="float32").reshape(3, 4)
        ga, gb = fluid.gradients([fluid.layers.reduce_sum(out * fluid.layers.assign(w))], [a, b])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    o, g1, g2 = exe.run(main, feed={"a": A, "b": np.ascontiguousarray(yv)}, fetch_list=[out, ga, gb])
    return {"functors": functors, "y_shape": list(y_shape), "attrs": attrs, "out": o.tolist(),
            "grad_a": g1.tolist(), "grad_b": g2.tolist()}


fused_cases = [fused(["elementwise_add", "relu"]), fused(["relu", "elementwise_add"]),
               fused(["elementwise_mul", "scale"], scale=0.5), fused(["scale", "elementwise_add"], scale=-2.0),
               fused(["tanh", "elementwise_add"]), fused(["elementwise_mul", "sigmoid"]),
               fused(["elementwise_add", "relu"], y_shape=(4,))]
cases = [case("partial_sum"), case("partial_sum", start_index=1, length=2), case("partial_concat"),
         case("partial_concat", start_index=2, length=1), case("partial_concat", start_index=1)]
with open(os.path.join(HERE, "contrib_layers.json"), "w") as f:
    json.dump({"a": A.tolist(), "b": B.tolist(), "cases": cases, "fused": fused_cases}, f)
print("wrote", len(cases))
