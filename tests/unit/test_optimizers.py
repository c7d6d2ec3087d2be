"""Each optimizer's update against a hand computation (Paddle's formulas), with its program structure;
LR schedules, regularization and gradient clipping."""

import numpy as np
import pytest

import paddle_compat as fluid
from helpers import param, rand

L = fluid.layers
X = rand(4, 3, seed=5)
W0 = rand(3, 2, seed=6)


def _linear_loss():
    """loss = mean(x @ W): dL/dW = x^T 1 / (N*2), the same every step (lets us iterate by hand)."""
    x = L.data(name="x", shape=[3])
    y = L.fc(x, 2, bias_attr=False,
             param_attr=fluid.ParamAttr(name="w", initializer=fluid.initializer.NumpyArrayInitializer(W0)))
    return L.mean(y)


GRAD = (X.T @ np.ones((4, 2), np.float32) / 8).astype(np.float32)


def _train(opt, steps=3, loss_fn=_linear_loss):
    loss = loss_fn()
    opt.minimize(loss)
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    for _ in range(steps):
        exe.run(feed={"x": X}, fetch_list=[loss])
    return param("w")


def _types():
    return [op.type for op in fluid.default_main_program().global_block().ops]


def test_sgd():
    w = _train(fluid.optimizer.SGD(0.1))
    np.testing.assert_allclose(w, W0 - 3 * 0.1 * GRAD, rtol=1e-5)
    assert _types()[-1] == "sgd"


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum(nesterov):
    w = _train(fluid.optimizer.Momentum(0.1, momentum=0.9, use_nesterov=nesterov))
    p, v = W0.astype(np.float64), np.zeros_like(W0, np.float64)
    for _ in range(3):
        v = 0.9 * v + GRAD
        p = p - (GRAD + 0.9 * v) * 0.1 if nesterov else p - 0.1 * v
    np.testing.assert_allclose(w, p, rtol=1e-5)
    assert "w_velocity_0" in [v.name for v in fluid.default_main_program().list_vars()]


def test_adam_matches_paddle_formula_and_state():
    w = _train(fluid.optimizer.Adam(0.01, beta1=0.9, beta2=0.99, epsilon=1e-6))
    p, m1, m2, b1p, b2p = W0.astype(np.float64), 0.0, 0.0, 0.9, 0.99
    for _ in range(3):
        lr_t = 0.01 * np.sqrt(1 - b2p) / (1 - b1p)
        m1 = 0.9 * m1 + 0.1 * GRAD
        m2 = 0.99 * m2 + 0.01 * GRAD * GRAD
        p = p - lr_t * (m1 / (np.sqrt(m2) + 1e-6))   # Paddle 1.8.5: epsilon unscaled
        b1p, b2p = b1p * 0.9, b2p * 0.99
    np.testing.assert_allclose(w, p, rtol=1e-5)
    np.testing.assert_allclose(param("w_beta1_pow_acc_0"), [0.9 ** 4], rtol=1e-6)
    np.testing.assert_allclose(param("w_moment2_0"), m2, rtol=1e-5)
    adam = fluid.default_main_program().global_block().ops[-1]
    assert adam.type == "adam" and adam.attr("op_role_var") == ["w", "w@GRAD"]
    assert adam.output("ParamOut") == ["w"] and adam.output("Beta1PowOut") == ["w_beta1_pow_acc_0"]


def test_adagrad():
    w = _train(fluid.optimizer.Adagrad(0.1, epsilon=1e-6, initial_accumulator_value=0.1))
    p, m = W0.astype(np.float64), np.full_like(W0, 0.1, np.float64)
    for _ in range(3):
        m = m + GRAD * GRAD
        p = p - 0.1 * GRAD / (np.sqrt(m) + 1e-6)
    np.testing.assert_allclose(w, p, rtol=1e-5)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop(centered):
    w = _train(fluid.optimizer.RMSProp(0.01, rho=0.9, epsilon=1e-6, momentum=0.5, centered=centered))
    p, ms, mg, mom = W0.astype(np.float64), 0.0, 0.0, 0.0
    for _ in range(3):
        ms = 0.9 * ms + 0.1 * GRAD * GRAD
        if centered:
            mg = 0.9 * mg + 0.1 * GRAD
            mom = 0.5 * mom + 0.01 * GRAD / np.sqrt(ms - mg * mg + 1e-6)
        else:
            mom = 0.5 * mom + 0.01 * GRAD / np.sqrt(ms + 1e-6)
        p = p - mom
    np.testing.assert_allclose(w, p, rtol=1e-4)


def test_adamax_and_beta_pow_scale_op():
    w = _train(fluid.optimizer.Adamax(0.01, beta1=0.9, beta2=0.99, epsilon=1e-8))
    p, m, inf, b1p = W0.astype(np.float64), 0.0, 0.0, 0.9
    for _ in range(3):
        m = 0.9 * m + 0.1 * GRAD
        inf = np.maximum(0.99 * inf + 1e-8, np.abs(GRAD))
        p = p - (0.01 / (1 - b1p)) * m / inf
        b1p *= 0.9
    np.testing.assert_allclose(w, p, rtol=1e-5)
    assert _types()[-2:] == ["adamax", "scale"]


def test_minimize_returns_ops_and_backwards_params_grads():
    x = L.data(name="x", shape=[3])
    h = L.fc(L.fc(x, 4), 2)
    ops, pg = fluid.optimizer.SGD(0.1).minimize(L.mean(h))
    # Paddle 1.8.5 returns append_backward's pairs, in its order (it sorts a copy by name for the update)
    assert [p.name for p, g in pg] == ["fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0"]
    assert [op.type for op in ops] == ["sgd"] * 4
    lr = [v for v in fluid.default_main_program().list_vars() if v.name.startswith("learning_rate")]
    assert len(lr) == 1 and lr[0].persistable


def test_learning_rate_must_be_float_or_variable():
    with pytest.raises(TypeError, match="learning_rate"):
        fluid.optimizer.SGD(learning_rate="0.1")


def test_param_learning_rate_scales():
    x = L.data(name="x", shape=[3])
    y = L.fc(x, 2, bias_attr=False, param_attr=fluid.ParamAttr(
        name="w", learning_rate=0.5, initializer=fluid.initializer.NumpyArrayInitializer(W0)))
    loss = L.mean(y)
    fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    exe.run(feed={"x": X})
    np.testing.assert_allclose(param("w"), W0 - 0.05 * GRAD, rtol=1e-5)


@pytest.mark.parametrize("reg", ["l2", "l1"])
def test_regularization(reg):
    r = fluid.regularizer.L2Decay(0.1) if reg == "l2" else fluid.regularizer.L1Decay(0.1)
    w = _train(fluid.optimizer.SGD(0.1, regularization=r), steps=1)
    decay = 0.1 * (W0 if reg == "l2" else np.sign(W0))
    np.testing.assert_allclose(w, W0 - 0.1 * (GRAD + decay), rtol=1e-5)
    types = _types()
    assert types[-3:] == (["scale", "sum", "sgd"] if reg == "l2" else ["scale", "sum", "sgd"])


def test_param_regularizer_wins_over_optimizer_one():
    x = L.data(name="x", shape=[3])
    y = L.fc(x, 2, bias_attr=False, param_attr=fluid.ParamAttr(
        name="w", regularizer=fluid.regularizer.L2Decay(1.0),
        initializer=fluid.initializer.NumpyArrayInitializer(W0)))
    fluid.optimizer.SGD(0.1, regularization=fluid.regularizer.L2Decay(100.0)).minimize(L.mean(y))
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    exe.run(feed={"x": X})
    np.testing.assert_allclose(param("w"), W0 - 0.1 * (GRAD + W0), rtol=1e-5)


def test_clip_by_value_and_norm():
    loss = _linear_loss()
    fluid.clip.set_gradient_clip(fluid.clip.GradientClipByValue(max=0.05, min=-0.05))
    fluid.optimizer.SGD(1.0).minimize(loss)
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    exe.run(feed={"x": X})
    np.testing.assert_allclose(param("w"), W0 - np.clip(GRAD, -0.05, 0.05), rtol=1e-5)
    clip_ops = [op for op in fluid.default_main_program().global_block().ops if op.type == "clip"]
    assert clip_ops and clip_ops[0].attr("op_role") == fluid.framework.OpRole.Optimize


def test_clip_by_global_norm():
    x = L.data(name="x", shape=[3])
    y = L.fc(x, 2, param_attr=fluid.ParamAttr(name="w", initializer=fluid.initializer.NumpyArrayInitializer(W0)),
             bias_attr=fluid.ParamAttr(name="b", initializer=fluid.initializer.Constant(0.0)))
    loss = L.mean(y)
    opt = fluid.optimizer.SGD(1.0, grad_clip=fluid.clip.GradientClipByGlobalNorm(clip_norm=0.1))
    opt.minimize(loss)
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    exe.run(feed={"x": X})
    gb = np.full(2, 0.5, np.float32)
    norm = np.sqrt((GRAD ** 2).sum() + (gb ** 2).sum())
    scale = 0.1 / max(norm, 0.1)
    np.testing.assert_allclose(param("w"), W0 - GRAD * scale, rtol=1e-5)
    np.testing.assert_allclose(param("b"), -gb * scale, rtol=1e-5)


SCHEDULES = {
    "exponential": (lambda: L.exponential_decay(0.1, 2, 0.5), lambda s: 0.1 * 0.5 ** (s / 2)),
    "exponential_staircase": (lambda: L.exponential_decay(0.1, 2, 0.5, staircase=True),
                              lambda s: 0.1 * 0.5 ** np.floor(s / 2)),
    "natural_exp": (lambda: L.natural_exp_decay(0.1, 2, 0.5), lambda s: 0.1 * np.exp(-0.5 * s / 2)),
    "inverse_time": (lambda: L.inverse_time_decay(0.1, 2, 0.5), lambda s: 0.1 / (1 + 0.5 * s / 2)),
    "polynomial": (lambda: L.polynomial_decay(0.1, 4, 0.01, power=2.0),
                   lambda s: (0.1 - 0.01) * (1 - min(s, 4) / 4) ** 2 + 0.01),
    "polynomial_cycle": (lambda: L.polynomial_decay(0.1, 2, 0.01, power=1.0, cycle=True),
                         lambda s: (0.1 - 0.01) * (1 - s / (2 * max(1, np.ceil(s / 2)))) + 0.01),
    "piecewise": (lambda: L.piecewise_decay([2, 4], [0.1, 0.05, 0.01]),
                  lambda s: 0.1 if s < 2 else 0.05 if s < 4 else 0.01),
    # Paddle 1.8's third argument scales the schedule
    "noam": (lambda: L.noam_decay(64, 3, learning_rate=2.0),
             lambda s: 2.0 * 64 ** -0.5 * min((s + 1) ** -0.5, 3 ** -1.5 * (s + 1))),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_lr_schedules(name):
    make, want = SCHEDULES[name]
    lr = make()
    loss = _linear_loss()
    fluid.optimizer.SGD(lr).minimize(loss)
    lr_ops = [op for op in fluid.default_main_program().global_block().ops
              if op.attr("op_role") & fluid.framework.OpRole.LRSched]
    assert lr_ops and lr_ops[0].type == "increment"
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    got = [float(exe.run(feed={"x": X}, fetch_list=[lr])[0][0]) for _ in range(6)]
    np.testing.assert_allclose(got, [want(s) for s in range(6)], rtol=1e-5)
    if name == "piecewise":   # exact values, as Paddle's Switch gave
        assert got == [np.float32(v) for v in (0.1, 0.1, 0.05, 0.05, 0.01, 0.01)]


def test_apply_gradients_returns_the_optimize_ops():
    """Paddle 1.8: backward() + apply_gradients() returns the list of appended ops (minimize returns a pair);
    a parameter learning rate != 1 adds its `scale` op first, Adamax its beta1_pow `scale` last."""
    loss = _linear_loss()
    opt = fluid.optimizer.SGD(0.1)
    ops = opt.apply_gradients(opt.backward(loss))
    assert [op.type for op in ops] == ["sgd"]
    fluid.framework.switch_main_program(fluid.Program())
    x = L.data(name="x", shape=[3])
    loss = L.mean(L.fc(x, 2, bias_attr=False, param_attr=fluid.ParamAttr(name="w2", learning_rate=1.1)))
    adamax = fluid.optimizer.Adamax(0.1)
    ops = adamax.apply_optimize(loss, fluid.default_startup_program(), adamax.backward(loss))
    assert [op.type for op in ops] == ["scale", "adamax", "scale"]


@pytest.mark.parametrize("cls,names", [
    (fluid.optimizer.Momentum, ("_velocity_acc_str",)),
    (fluid.optimizer.Adam, ("_moment1_acc_str", "_moment2_acc_str", "_beta1_pow_acc_str", "_beta2_pow_acc_str")),
    (fluid.optimizer.Adagrad, ("_moment_acc_str",)),
    (fluid.optimizer.Adamax, ("_moment_acc_str", "_inf_norm_acc_str", "_beta1_pow_acc_str")),
    (fluid.optimizer.Ftrl, ("_squared_acc_str", "_linear_acc_str")),
    (fluid.optimizer.RMSProp, ("_momentum_acc_str", "_mean_square_acc_str", "_mean_grad_acc_str")),
])
def test_accumulator_name_attributes_key_the_accumulators(cls, names):
    """Subclasses (and Paddle's tests) read an optimizer's state through its `_<x>_acc_str` class attributes."""
    opt = cls(0.1, momentum=0.9) if cls is fluid.optimizer.Momentum else cls(0.1)
    opt.minimize(_linear_loss())
    for n in names:
        assert "w" in opt._accumulators[getattr(cls, n)]


def test_recompute_load_message_is_paddles():
    opt = fluid.optimizer.RecomputeOptimizer(fluid.optimizer.SGD(0.1))
    with pytest.raises(NotImplementedError, match="load function is not supported by Recompute Optimizer"):
        opt.load({})
