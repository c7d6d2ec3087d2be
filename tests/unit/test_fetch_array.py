"""Fetched losses convert with float()/'%f' as Fluid scripts use them, whatever numpy's version (numpy >= 2.4
refuses float() of a shape-[1] ndarray); and through np.array(loss), which makes a plain ndarray, as long as
numpy stays below 2.4 (pyproject.toml's bound)."""

import warnings

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.ir.fetch_array import FetchArray


def _run_mean():
    x = fluid.data("x", [None, 2], "float32")
    loss = fluid.layers.mean(x)
    exe = fluid.Executor(fluid.CPUPlace())
    out, xs = exe.run(feed={"x": np.array([[1, 2], [3, 4]], "float32")}, fetch_list=[loss, x])
    return out, xs


def test_loss_fetch_is_float_convertible():
    loss, xs = _run_mean()
    assert isinstance(loss, np.ndarray) and loss.shape == (1,) and loss.dtype == np.float32
    assert float(loss) == 2.5
    assert "%f" % loss == "2.500000"
    assert int(loss) == 2
    assert "%.2f" % float(loss * 2) == "5.00"


def test_a_loss_made_a_plain_array_still_converts():
    """`avg_cost = np.array(avg_cost); print('%f' % avg_cost)`, as Paddle-era scripts write: np.array() drops
    FetchArray, so this holds only under the numpy < 2.4 that pyproject.toml asks for."""
    loss, _ = _run_mean()
    plain = np.array(loss)
    assert type(plain) is np.ndarray
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)     # numpy 1.25-2.3 warn, and convert
        assert float(plain) == 2.5
        assert "%f" % plain == "2.500000"


def test_bigger_fetch_still_refuses_float():
    _, xs = _run_mean()
    with pytest.raises(TypeError, match=r"shape \[2, 2\]"):
        float(xs)
    np.testing.assert_array_equal(xs, [[1, 2], [3, 4]])


def test_fetch_array_is_a_view():
    a = np.arange(3.0)
    v = a.view(FetchArray)
    v[0] = 7
    assert a[0] == 7 and float(v[1:2]) == 1.0
