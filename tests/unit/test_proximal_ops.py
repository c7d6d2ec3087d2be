"""proximal_gd / proximal_adagrad against the formulas of Paddle 1.8's kernels (its op tests' references)."""

import numpy as np

from paddle_compat.fluid import core
from paddle_compat.fluid.op import Operator


def _run(op_type, inputs, outputs, **attrs):
    scope, place = core.Scope(), core.CPUPlace()
    for k, v in inputs.items():
        scope.var(k).get_tensor().set(v, place)
    for k in outputs:
        scope.var(k + "_o").get_tensor()
    Operator(op_type, **{k: k for k in inputs}, **{k: k + "_o" for k in outputs}, **attrs).run(scope, place)
    return [np.array(scope.find_var(k + "_o").get_tensor()) for k in outputs]


def _shrink(prox, lr, l1, l2):
    if l1 > 0:
        return np.sign(prox) * np.maximum(np.abs(prox) - lr * l1, 0) / (1 + lr * l2)
    return prox / (1 + lr * l2)


def test_proximal_gd():
    rng = np.random.RandomState(0)
    w, g = rng.randn(5, 4).astype("float32"), rng.randn(5, 4).astype("float32")
    lr = np.array([0.1], dtype="float32")
    for l1, l2 in ((0.1, 0.2), (0.0, 0.3)):
        (out,) = _run("proximal_gd", {"Param": w, "Grad": g, "LearningRate": lr}, ["ParamOut"], l1=l1, l2=l2)
        np.testing.assert_allclose(out, _shrink(w - lr * g, lr, l1, l2), rtol=1e-6, atol=1e-7)


def test_proximal_adagrad():
    rng = np.random.RandomState(1)
    w, g, m = (rng.rand(5, 4).astype("float32") for _ in range(3))
    lr = np.array([0.1], dtype="float32")
    out, m_out = _run("proximal_adagrad", {"Param": w, "Moment": m, "Grad": g, "LearningRate": lr},
                      ["ParamOut", "MomentOut"], l1=0.1, l2=0.2)
    want_m = m + g * g
    np.testing.assert_allclose(m_out, want_m, rtol=1e-6)
    np.testing.assert_allclose(out, _shrink(w - lr * g / np.sqrt(want_m), lr, 0.1, 0.2), rtol=1e-5, atol=1e-7)


def test_dgc_momentum_matches_paddle18_on_both_sides_of_rampup():
    import json
    import os
    rec = json.load(open(os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "dgc_momentum.json")))
    for step, want in rec["steps"].items():
        inputs = {k: np.array(v, dtype="float32") for k, v in rec["inputs"].items()}
        inputs["current_step"] = np.array([float(step)], dtype="float32")
        scope, place = core.Scope(), core.CPUPlace()
        for k, v in inputs.items():
            scope.var(k).get_tensor().set(v, place)
        Operator("dgc_momentum", Param="Param", Grad="Grad", Velocity="Velocity", LearningRate="LearningRate",
                 current_step="current_step", nranks="nranks", ParamOut="Param", VelocityOut="Velocity",
                 Grad_out="Grad", **rec["attrs"]).run(scope, place)
        got = [np.array(scope.find_var(n).get_tensor()).tolist() for n in ("Param", "Velocity", "Grad")]
        np.testing.assert_allclose(np.array(got[0]), want[0], rtol=1e-6)
        np.testing.assert_allclose(np.array(got[1]), want[1], rtol=1e-6)
        np.testing.assert_allclose(np.array(got[2]), want[2], rtol=1e-6)
