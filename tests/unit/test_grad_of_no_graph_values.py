"""Gradients of variables whose value carries no graph, as Paddle 1.8 gives them: a fill_constant output
(or 2 * a data variable) with stop_gradient False gets its @GRAD through a cond (Paddle's test_cond cases,
whose expected values 1.8.5 meets); under data parallelism a fetched input gradient is each place's own,
from a loss gradient of 1/places (1.8.5: half the single-place value on two places)."""

import numpy as np
import pytest

import paddle_compat as fluid

L = fluid.layers


def _run(main, fetch, feed=None):
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        return exe.run(main, feed=feed or {}, fetch_list=fetch)


def test_grad_of_fill_constant_through_cond():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        a = L.fill_constant(shape=[1], dtype="float32", value=1.23)
        a.stop_gradient = False
        b = L.fill_constant(shape=[1], dtype="float32", value=1.25)
        b.stop_gradient = False
        out = L.cond(a - b < -1.0, lambda: a, lambda: b)
        nested = L.cond(a < b, lambda: L.cond(a - b < -1.0, lambda: a + b, lambda: a * b),
                        lambda: a - b)
        fluid.backward.append_backward(L.elementwise_add(out, nested))
    got = _run(main, [out, nested, a.grad_name, b.grad_name])
    assert got[0][0] == np.float32(1.25)
    np.testing.assert_allclose(got[1][0], 1.23 * 1.25, rtol=1e-6)
    # d(out + a*b)/da = b, d/db = 1 + a
    np.testing.assert_allclose(got[2][0], 1.25, rtol=1e-6)
    np.testing.assert_allclose(got[3][0], 1 + 1.23, rtol=1e-6)


@pytest.mark.parametrize("i", [2, 4, 6, 9])
def test_grad_of_a_value_computed_from_data_through_nested_cond(i):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="i", shape=[1], dtype="float32")
        a = 2.0 * x
        out = L.cond(x < 5.0, lambda: L.cond(x >= 3.0, lambda: a + a, lambda: a - a),
                     lambda: L.cond(x < 8.0, lambda: a * a, lambda: a / a))
        fluid.backward.append_backward(L.mean(out))
    ret, grad = _run(main, [out.name, a.grad_name], {"i": np.full((1,), i, np.float32)})
    av = 2.0 * i
    want = (av + av if i >= 3 else 0.0, 2.0 if i >= 3 else 0.0) if i < 5 else \
        ((av * av, 2 * av) if i < 8 else (1.0, 0.0))
    assert (ret[0], grad[0]) == want


def test_fetched_input_gradient_per_place(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "2")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[-1, 3], dtype="float32")
        x.stop_gradient = False
        loss = L.mean(L.fc(x, size=2, act="tanh",
                           param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.3))))
        fluid.backward.append_backward(loss)
    feed = np.array([[0.1, -0.2, 0.3]], "float32")
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        single = exe.run(main, feed={"x": feed}, fetch_list=[x.grad_name])[0]
        prog = fluid.CompiledProgram(main).with_data_parallel(loss_name=loss.name)
        both = exe.run(prog, feed={"x": np.repeat(feed, 2, 0)}, fetch_list=[x.grad_name])[0]
    assert both.shape == (2, 3)
    np.testing.assert_allclose(both, np.repeat(single, 2, 0) / 2, rtol=1e-6)


def test_cond_checks_its_name():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        pred = fluid.data(name="y", shape=[1], dtype="bool")
        with pytest.raises(TypeError, match="name"):
            L.cond(pred, lambda: pred, lambda: pred, set())
