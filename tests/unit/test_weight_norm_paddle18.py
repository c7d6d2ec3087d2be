"""WeightNormParamAttr against Paddle 1.8.5 (tests/data/paddle18/make_weight_norm.py recorded it): g and v after
the startup program, their gradients, the loss and g over 2 SGD steps, and the ops of both programs."""

import json
import os
import sys

import numpy as np
import pytest

import paddle_compat.fluid as fluid

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
sys.path.insert(0, HERE)
import make_weight_norm as M  # noqa: E402  (builds the same programs)

REF = json.load(open(os.path.join(HERE, "weight_norm.json")))


@pytest.mark.parametrize("kind,dim", M.CASES)
def test_weight_norm_matches_paddle(kind, dim):
    want = REF["%s_%s" % (kind, dim)]
    got = M.run(fluid, kind, dim)
    assert got["startup_ops"] == want["startup_ops"]
    # the forward ops (the backward's own op list differs: gradients come from autograd here)
    fwd = want["main_ops"][:want["main_ops"].index("reduce_mean") + 1]
    assert got["main_ops"][:len(fwd)] == fwd
    np.testing.assert_allclose(got["g0"], want["g0"], rtol=1e-5)
    np.testing.assert_allclose(got["v0"], want["v0"], rtol=1e-6)
    for g, w in zip(got["steps"], want["steps"]):
        np.testing.assert_allclose(g["loss"], w["loss"], rtol=1e-4)
        for k in ("g_grad", "v_grad", "g"):
            np.testing.assert_allclose(g[k], w[k], rtol=1e-4, atol=1e-6)


def test_weight_norm_params_are_listed():
    main, _, _ = M.build(fluid, "fc", 0)
    names = [p.name for p in main.all_parameters()]
    assert sorted(names) == ["wn_g", "wn_v"]
    assert main.global_block().var("wn_g").shape == (4, 1)
