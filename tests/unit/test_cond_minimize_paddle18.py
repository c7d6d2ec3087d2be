"""optimizer.minimize inside the branches of a cond, trained for a few steps, against Paddle 1.8.5
(tests/data/paddle18/make_cond_minimize.py, whose build() makes the same program here): the losses, the
parameters after each step, the updates they imply (the gradients, lr * grad), and the block structure."""

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


@pytest.fixture(scope="module")
def ours():
    return MK.train(fluid)


@pytest.mark.parity
def test_losses_and_parameters_match_paddle18(ours):
    losses, params, _ = ours
    np.testing.assert_allclose(losses, REF["losses"], rtol=1e-4, atol=1e-6)
    for name in MK.PARAMS:
        got, want = np.array(params[name]), np.array(REF["params"][name])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=name)
        # the update of each step is lr * the gradient the branch's backward block computed
        np.testing.assert_allclose(np.diff(got, axis=0), np.diff(want, axis=0), rtol=1e-4, atol=1e-6,
                                   err_msg=name + " updates")


def test_only_the_taken_branch_updates(ours):
    _, params, _ = ours
    w1 = np.array(params["w1"])           # used only in the true branch (flag 0)
    moved = [bool(np.any(w1[i] != w1[i - 1])) for i in range(1, len(MK.FLAGS))]
    assert moved == [f == 0 for f in MK.FLAGS[1:]]
    assert not np.allclose(np.array(params["w0"])[0], MK.W0)     # block 0's fc trains in both branches


def test_block_structure_matches_paddle18(ours):
    blocks = ours[2]
    # Paddle's grad op of `scale` is a scale op; ours keeps the <type>_grad name of every recorded grad op
    want = [dict(b, ops=["scale_grad" if (b["forward"] >= 0 and t == "scale") else t for t in b["ops"]])
            for b in REF["blocks"]]
    assert blocks == want
