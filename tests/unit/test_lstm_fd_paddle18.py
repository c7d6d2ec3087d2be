"""Where Paddle 1.8.5 is wrong: its CPU dynamic_lstm gradient when the hidden size is a multiple of 8. Recorded
by tests/data/paddle18/make_lstm_fd.py: Paddle's forward loss, its analytic input gradient and the finite
differences of its own forward. Paddle's gradient agrees with its finite differences at H = 7 and not at H = 8;
ours agrees with them at both (we keep Paddle's forward and the true gradient)."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "lstm_fd.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_lstm_fd", os.path.join(DATA, "make_lstm_fd.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


def _close(a, b):
    """float32 central differences (eps 1e-3) are good to ~1e-3 of the gradient's scale."""
    a, b = np.asarray(a, "float64"), np.asarray(b, "float64")
    return np.abs(a - b).max() <= 2e-3 * np.abs(b).max()


def test_paddle18s_gradient_is_wrong_only_at_a_multiple_of_8():
    assert _close(REF["7"]["grad"], REF["7"]["fd"])
    assert not _close(REF["8"]["grad"], REF["8"]["fd"])
    # not a rounding matter: the whole gradient is off
    assert np.abs(np.subtract(REF["8"]["grad"], REF["8"]["fd"])).max() > 0.5 * np.abs(REF["8"]["fd"]).max()


@pytest.mark.parity
@pytest.mark.parametrize("H", [7, 8])
def test_our_gradient_is_the_true_one(H):
    X = MK.inputs(H)[0]
    f = MK.make(fluid, H)
    loss, grad = f(X, True)
    ref = REF[str(H)]
    np.testing.assert_allclose(loss, ref["loss"], rtol=1e-5)        # Paddle's forward
    assert _close(grad, ref["fd"])                                    # the gradient of that forward
    assert _close(grad, MK.finite_differences(f, X))                  # and of ours
