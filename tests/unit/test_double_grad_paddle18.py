"""Gradients of gradients: fluid.gradients over a program that already holds a backward differentiates
through it (the first backward's autograd call keeps its graph), against Paddle 1.8.5's numbers
(tests/data/paddle18/make_double_grad.py) and finite differences where 1.8.5 is wrong."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.backends.lowering.autograd_region import find_regions

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "double_grad.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("double_grad_cases", os.path.join(DATA, "double_grad_cases.py"))
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)


@pytest.mark.parametrize("case", ["square_sub", "penalty", "penalty_sgd"])
def test_matches_paddle18(case):
    got = C.run(fluid, case)
    assert sorted(got) == sorted(REF[case])
    for k, ref in REF[case].items():
        np.testing.assert_allclose(np.array(got[k]), np.array(ref), rtol=1e-4, atol=1e-6, err_msg=k)


def _pen(w, b, act):
    """The penalty of double_grad_cases.penalty in float64: gx = d sum(act(xw + b)^2) / dx, mean(gx^2)."""
    z = C.X.astype(np.float64) @ w + b
    h, dh = (np.tanh(z), 1 - np.tanh(z) ** 2) if act == "tanh" else (z, np.ones_like(z))
    gx = (2 * h * dh) @ w.T
    return np.mean(gx * gx)


def _fd(f, v, eps=1e-5):
    g = np.zeros_like(v)
    for i in np.ndindex(v.shape):
        d = np.zeros_like(v)
        d[i] = eps
        g[i] = (f(v + d) - f(v - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("case,act", [("penalty", None), ("penalty_tanh", "tanh")])
def test_penalty_gradients_are_the_finite_differences(case, act):
    got = C.run(fluid, case)
    w, b = C.W.astype(np.float64), C.B.astype(np.float64)
    np.testing.assert_allclose(got["pen"][0], _pen(w, b, act), rtol=1e-5)
    np.testing.assert_allclose(got["gw"][0], _fd(lambda v: _pen(v, b, act), w), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(got["gb"][0], _fd(lambda v: _pen(w, v, act), b), rtol=1e-4, atol=1e-7)


def test_paddle18_is_wrong_through_tanh_and_we_are_not():
    """Paddle 1.8.5 has no tanh_grad_grad: its d pen / d b is None (not fetched) and its d pen / d w, the
    product's second derivative alone, is not the finite difference. Ours is."""
    ref = REF["penalty_tanh"]
    assert "gb" not in ref
    w, b = C.W.astype(np.float64), C.B.astype(np.float64)
    fd = _fd(lambda v: _pen(v, b, "tanh"), w)
    assert np.abs(np.array(ref["gw"][0]) - fd).max() > 1e-2
    np.testing.assert_allclose(C.run(fluid, "penalty_tanh")["gw"][0], fd, rtol=1e-4, atol=1e-7)


def test_paddle18_is_wrong_when_the_first_gradient_is_read_twice():
    """z = (x - dx^2/dx) * (x - dx^2/dx) is x^2 (x = 3): dz/dx = 6. Paddle 1.8.5 gives 9 when the
    subtraction is written twice (two ops reading x@GRAD); we give 6 either way."""
    assert REF["square_sub_twice"]["g2"] == [[9.0]] and REF["square_sub"]["g2"] == [[6.0]]
    got = C.run(fluid, "square_sub_twice")
    assert got["g1"] == [[6.0]] and got["g2"] == [[6.0]]


def test_the_second_backward_names_its_gradients_apart_as_paddle_does():
    main, _, _, fetch = C.square_sub(fluid)
    assert (fetch["g1"], fetch["g2"]) == ("x@GRAD", "grad/grad/x@GRAD")
    first, second = find_regions(main.global_block(), [fetch["g1"], fetch["g2"]])
    # the first backward keeps its graph for the second, whose only seed is its own target's gradient
    assert first.create_graph and not second.create_graph
    assert second.targets == ["tmp_2"] and second.wanted_forward() == ["x"]


def test_calc_gradient_of_one_input_is_the_variable():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.create_parameter(dtype="float32", shape=[5, 10])
        y = fluid.layers.create_parameter(dtype="float32", shape=[10, 8])
        out = fluid.layers.mul(x=x, y=y)
        mean = fluid.layers.mean(out)
        a = fluid.backward.calc_gradient(mean, out)
        b = fluid.backward.calc_gradient(mean, x)
        both = fluid.backward.calc_gradient(mean, [x, y])
    # Paddle 1.8.5's names: the second backward's seed of an existing mean@GRAD is a new name
    assert isinstance(a, fluid.Variable) and a.name == out.name + "@GRAD"
    assert b.name == x.name + "@GRAD" and isinstance(both, list) and len(both) == 2
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    va, vb = exe.run(main, fetch_list=[a, b], scope=scope)
    np.testing.assert_allclose(va, np.full((5, 8), 1 / 40.0), rtol=1e-6)
    wy = np.array(scope.find_var(y.name).get_tensor())
    # (atol: float32 sums of ten terms near cancelling differ from numpy's in the last bits)
    np.testing.assert_allclose(vb, np.tile(wy.sum(axis=1) / 40.0, (5, 1)), rtol=1e-5, atol=1e-8)


def test_renamed_gradient_parts_take_their_forwards_shape():
    main, _, _, fetch = C.penalty(fluid)
    block = main.global_block()
    parts = [v for v in block.vars.values() if v.name.startswith("grad/grad/") and "@RENAME@" in v.name]
    assert parts
    for v in parts:
        fwd = block.var(v.name.split("@GRAD")[0][len("grad/grad/"):])
        assert tuple(v.shape) == tuple(fwd.shape), v.name
