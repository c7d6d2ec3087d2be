"""optimizer.minimize inside the branches of a cond, trained for a few steps, against Paddle 1.8.5
(tests/data/paddle18/make_cond_minimize.py, whose build() makes the same programs here; SGD in both branches,
and Momentum with L2Decay in one and Adam in the other): the losses, the parameters after each step, the
updates they imply, and the block structure."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "cond_minimize.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_cond_minimize", os.path.join(DATA, "make_cond_minimize.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


CASES = sorted(REF["cases"])


@pytest.fixture(scope="module", params=CASES)
def case(request):
    return request.param, MK.train(fluid, request.param), REF["cases"][request.param]


def test_recorded_cases():
    assert CASES == sorted(MK.CASES) and REF["flags"] == MK.FLAGS


@pytest.mark.parity
def test_losses_and_parameters_match_paddle18(case):
    _, (losses, params, _), ref = case
    np.testing.assert_allclose(losses, ref["losses"], rtol=1e-4, atol=1e-6)
    for name in MK.PARAMS:
        got, want = np.array(params[name]), np.array(ref["params"][name])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=name)
        # the update of each step comes from the gradient the branch's backward block computed
        np.testing.assert_allclose(np.diff(got, axis=0), np.diff(want, axis=0), rtol=1e-4, atol=1e-6,
                                   err_msg=name + " updates")


def test_only_the_taken_branch_updates(case):
    _, (_, params, _), _ = case
    w1 = np.array(params["w1"])           # used only in the true branch (flag 0)
    moved = [bool(np.any(w1[i] != w1[i - 1])) for i in range(1, len(MK.FLAGS))]
    assert moved == [f == 0 for f in MK.FLAGS[1:]]      # (its momentum update runs with its branch only)
    assert not np.allclose(np.array(params["w0"])[0], MK.W0)     # block 0's fc trains in both branches


def test_block_structure_matches_paddle18(case):
    _, (_, _, blocks), ref = case
    # Paddle's grad op of `scale` is a scale op; ours keeps the <type>_grad name of every recorded grad op
    # (only the grad op: the backward block's first scale follows the seed, an L2Decay's follow mul_grad)
    want = []
    for b in ref["blocks"]:
        ops = list(b["ops"])
        if b["forward"] >= 0 and len(ops) > 1 and ops[1] == "scale":
            ops[1] = "scale_grad"
        want.append(dict(b, ops=ops))
    assert blocks == want
