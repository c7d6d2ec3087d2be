"""The dense adam kernel against one step of Paddle 1.8.5's (tests/data/paddle18/make_adam_kernel.py).

Paddle's CPU kernel computes, in float32: lr_t = lr * (sqrt(1 - beta2_pow) / (1 - beta1_pow)),
m1 = beta1 * m1 + (1 - beta1) * g, m2 = beta2 * m2 + ((1 - beta2) * g) * g,
p = p - lr_t * (m1 / (sqrt(m2) + eps)). Done in that order the moments are bit-identical. The parameter
is not always: Eigen's vectorized float sqrt (rsqrt estimate plus one Newton step) is not correctly
rounded and depends on the CPU, so it stays within a few ulp, most elements exact."""

import os

import numpy as np

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "adam_kernel.npz")


def _run_adam(ref):
    main = fluid.Program()
    block = main.global_block()
    slots = ["Param", "Grad", "Moment1", "Moment2", "LearningRate", "Beta1Pow", "Beta2Pow"]
    for s in slots:
        block.create_var(name=s, shape=ref["in_" + s].shape, dtype="float32", persistable=True)
    block.append_op(type="adam", inputs={s: [s] for s in slots},
                    outputs={"ParamOut": ["Param"], "Moment1Out": ["Moment1"], "Moment2Out": ["Moment2"],
                             "Beta1PowOut": ["Beta1Pow"], "Beta2PowOut": ["Beta2Pow"]},
                    attrs={"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8})
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        for s in slots:
            scope.var(s).get_tensor().set(ref["in_" + s].copy(), fluid.CPUPlace())
        fluid.Executor(fluid.CPUPlace()).run(main)
        return {s: np.array(scope.find_var(s).get_tensor()) for s in ("Param", "Moment1", "Moment2",
                                                                       "Beta1Pow", "Beta2Pow")}


def test_dense_adam_step_matches_paddle18():
    ref = np.load(DATA)
    got = _run_adam(ref)
    np.testing.assert_array_equal(got["Moment1"], ref["out_Moment1Out"])
    np.testing.assert_array_equal(got["Moment2"], ref["out_Moment2Out"])
    # in ulps of the larger of the parameter before and after (where p - update cancels, the result's own
    # ulp is tiny)
    diff = np.abs(got["Param"].astype(np.float64) - ref["out_ParamOut"])
    ulps = diff / np.spacing(np.maximum(np.abs(ref["in_Param"]), np.abs(ref["out_ParamOut"])))
    assert ulps.max() <= 4, ulps.max()
    assert (diff == 0).mean() > 0.8, (diff == 0).mean()
    np.testing.assert_allclose(got["Beta1Pow"], np.float32(0.9 ** 3) * np.float32(0.9))
    np.testing.assert_allclose(got["Beta2Pow"], np.float32(0.999 ** 3) * np.float32(0.999))
