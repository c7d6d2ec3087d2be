"""DynamicRNN, StaticRNN and IfElse against numbers recorded from Paddle 1.8.5
(tests/data/paddle18/make_rnn_flow.py, whose builders make the same programs here): outputs and gradients
w.r.t. the fed inputs and every parameter used inside the step blocks; plus program structure and bad input."""

import importlib.util
import os

import numpy as np
import pytest

import paddle_compat as fluid

L = fluid.layers
DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
REF = np.load(os.path.join(DATA, "rnn_flow.npz"))
_spec = importlib.util.spec_from_file_location("make_rnn_flow", os.path.join(DATA, "make_rnn_flow.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_matches_paddle18(name):
    ref = {k.split("|", 1)[1]: REF[k] for k in REF.files if k.startswith(name + "|")}
    got = MK.run_case(fluid, name, {k: v for k, v in ref.items() if k.startswith("param/")})
    for k, v in ref.items():
        if k.startswith("param/"):
            continue
        assert k in got, "%s: no %s (got %s)" % (name, k, sorted(got))
        np.testing.assert_allclose(got[k].reshape(v.shape), v, rtol=1e-4, atol=1e-5, err_msg="%s %s" % (name, k))
    extra = [k for k in got if k.startswith("grad/") and k not in ref]
    assert not extra, extra
