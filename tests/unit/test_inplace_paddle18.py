"""Layers that reshape in place (reshape(inplace=True); npair_loss and roll, which use it) and paddle.compat's
inplace= helpers, against Paddle 1.8.5's recorded behaviour (tests/data/paddle18/make_inplace.py): the variable
returned is the input with its new build-time shape, forward numbers and gradients."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "inplace.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_inplace", os.path.join(DATA, "make_inplace.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


def _close(got, want, key):
    """floats to 1e-4 relative; ints, bools, strings and shapes exactly."""
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (key, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, "%s[%d]" % (key, i))
    elif isinstance(want, float):
        assert isinstance(got, float), (key, got)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=key)
    else:
        assert got == want and type(got) is type(want), (key, got, want)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["matmul", "act_and_zero", "npair_roll"])
def test_inplace_layers_match_paddle18(name):
    got = getattr(MK, "case_" + name)(fluid)
    want = REF[name]
    assert sorted(got) == sorted(want)
    for k in want:
        _close(got[k], want[k], "%s/%s" % (name, k))


def test_inplace_reshape_then_matmul_builds():
    # the reported failure: matmul refused "inner dims differ: 20 vs 5" because x kept its old shape
    got = MK.case_matmul(fluid)
    assert got["same"] and got["after"] == [-1, 20] and got["out_shape"] == [-1, 3]


@pytest.mark.parity
def test_compat_inplace_helpers_match_paddle18():
    got = json.loads(json.dumps(MK.case_compat()))
    assert len(got) == len(REF["compat"])
    for g, w in zip(got, REF["compat"]):
        assert g == w
