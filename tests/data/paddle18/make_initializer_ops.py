"""Records the startup ops Paddle 1.8.5's initializers add (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_initializer_ops.py

Writes initializer_ops.json beside this script: for each case, the ops of a startup program in order, each as
[type, {slot: [names]} of its outputs, its dtype attr (or in/out dtypes of a cast), its seed attr], and the
first values of a float16 parameter initialised by a constant. Cases (CASES below, built the same way by
tests/unit/test_initializer_ops.py with paddle_compat):
- a float16 parameter per initializer (init in float32 into `<prefix>.<name>.tmp_0`, then a cast);
- float32 parameters in creation order with seeded and deterministic initializers (Paddle prepends them);
- Bilinear, which Paddle appends.
Python 3.7 compatible.
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _params(fluid, case):
    I = fluid.initializer
    fp16 = [("c", I.Constant(2.5)), ("u", I.Uniform(-1.0, 1.0, seed=7)), ("n", I.Normal(0.0, 1.0, seed=8)),
            ("t", I.TruncatedNormal(0.0, 1.0, seed=9)), ("x", I.Xavier(seed=10)), ("m", I.MSRA(seed=11)),
            ("a", I.NumpyArrayInitializer(np.arange(8, dtype="float32").reshape(2, 4)))]
    if case == "fp16":
        return [(n, "float16", [2, 4], i) for n, i in fp16]
    if case == "order":
        return [("p0", "float32", [2, 4], I.Constant(1.0)), ("p1", "float32", [2, 4], I.Uniform(seed=3)),
                ("p2", "float32", [2, 4], I.NumpyArrayInitializer(np.ones([2, 4], "float32"))),
                ("p3", "float32", [2, 4], I.Normal(seed=5))]
    if case == "bilinear":
        return [("b0", "float32", [2, 1, 4, 4], I.Constant(0.5)), ("b1", "float32", [2, 1, 4, 4], I.Bilinear()),
                ("b2", "float32", [2, 1, 4, 4], I.Constant(0.25))]
    raise KeyError(case)


CASES = ["fp16", "order", "bilinear"]


def build(fluid, case):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        with fluid.unique_name.guard():
            for name, dtype, shape, init in _params(fluid, case):
                fluid.layers.create_parameter(shape, dtype, name=name, default_initializer=init)
    return main, startup


def describe(startup):
    ops = []
    for op in startup.global_block().ops:
        outs = {s: list(op.output(s)) for s in op.output_names}
        if op.type == "cast":
            dt = [int(op.attr("in_dtype")), int(op.attr("out_dtype"))]
        else:
            dt = int(op.attr("dtype")) if op.has_attr("dtype") else None
        seed = int(op.attr("seed")) if op.has_attr("seed") else None
        ops.append([op.type, outs, dt, seed])
    return ops


def main():
    import paddle.fluid as fluid
    out = {"cases": {c: describe(build(fluid, c)[1]) for c in CASES}}
    main_prog, startup = build(fluid, "fp16")
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        try:
            exe.run(startup)
            out["fp16_constant"] = np.array(scope.find_var("c").get_tensor()).astype("float32").ravel().tolist()
        except Exception as e:   # (the CPU build may lack a float16 cast)
            out["fp16_constant"] = "error: %s" % str(e).strip().splitlines()[-1][:200]
    with open(os.path.join(HERE, "initializer_ops.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
