"""BuildStrategy's multi_batch_merge_pass (Paddle 1.8, test_dist_mnist_batch_merge): forward + backward run
num_repeats times per step, the gradients are averaged, the optimizer runs once."""

import numpy as np
import pytest

import paddle_compat as fluid

X = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0
W0 = np.array([[0.1, -0.2], [0.3, 0.0], [-0.1, 0.2]], np.float32)


def _net(counter=False):
    x = fluid.layers.data(name="x", shape=[3])
    y = fluid.layers.fc(x, 2, bias_attr=False,
                        param_attr=fluid.ParamAttr(name="w", initializer=fluid.initializer.NumpyArrayInitializer(W0)))
    loss = fluid.layers.mean(y)
    if counter:   # a forward op with state: repeat k of a step sees c = k (1, 2, ...)
        c = fluid.layers.create_global_var(shape=[1], value=0.0, dtype="float32", persistable=True, name="c")
        fluid.layers.increment(c, 1.0, in_place=True)
        loss = fluid.layers.elementwise_mul(loss, c)
    fluid.optimizer.Momentum(0.1, momentum=0.9).minimize(loss)
    return loss


def _compiled(repeats):
    bs = fluid.BuildStrategy()
    p = bs._finalize_strategy_and_create_passes().insert_pass(0, "multi_batch_merge_pass")
    p.set("num_repeats", repeats)
    return fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(
        loss_name="mean_0.tmp_0", build_strategy=bs, places=[fluid.CPUPlace()])


def _w():
    return np.array(fluid.global_scope().find_var("w").get_tensor())


def test_program_repeats_forward_backward_and_averages_gradients():
    _net()
    prog = _compiled(3)._program
    types = [op.type for op in prog.global_block().ops]
    assert types.count("mul") == 3 and types.count("mul_grad") == 3 and types.count("momentum") == 1
    assert types[-2:] == ["scale", "momentum"] and types.count("sum") == 2 and types.count("assign") == 1
    scale = prog.global_block().ops[-2]
    assert scale.attr("scale") == pytest.approx(1 / 3) and scale.output("Out") == ["w@GRAD"]
    assert [op.type for op in fluid.default_main_program().global_block().ops].count("mul") == 1   # a copy


def test_same_feed_gives_the_plain_step():
    _net()
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    compiled = _compiled(2)
    for _ in range(2):
        exe.run(compiled, feed={"x": X})
    merged = _w()
    exe.run(fluid.default_startup_program())
    for _ in range(2):
        exe.run(fluid.default_main_program(), feed={"x": X})
    np.testing.assert_allclose(merged, _w(), rtol=1e-6)


def test_gradients_of_the_repeats_are_averaged():
    _net(counter=True)
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    exe.run(_compiled(2), feed={"x": X})
    # d(mean(xW) * c)/dW = c * x^T 1 / 8; repeats see c = 1 and c = 2: mean 1.5; momentum's first step is lr * g
    g = X.T @ np.ones((4, 2), np.float32) / 8
    np.testing.assert_allclose(_w(), W0 - 0.1 * 1.5 * g, rtol=1e-5)


def test_bad_num_repeats():
    _net()
    with pytest.raises(ValueError, match="num_repeats"):
        _compiled(0)
