"""fc's mul + bias add lowered as one addmm (backends/lowering/fusion_fc.py): the same numbers as the two ops,
and no fusion where the product itself is needed (fetched, read by another op, its gradient wanted)."""

import numpy as np

import paddle_compat as fluid
from paddle_compat.backends.lowering import fusion, fusion_fc

RS = np.random.RandomState(3)
X = RS.uniform(-1, 1, (5, 6)).astype(np.float32)
W = RS.uniform(-1, 1, (6, 4)).astype(np.float32)
B = RS.uniform(-1, 1, (4,)).astype(np.float32)


def _program(extra=None):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[6], dtype="float32")
        x.stop_gradient = False
        init = fluid.initializer.NumpyArrayInitializer
        h = fluid.layers.fc(x, 4, param_attr=fluid.ParamAttr("w", initializer=init(W)),
                            bias_attr=fluid.ParamAttr("b", initializer=init(B)))
        product = main.global_block().ops[0].output("Out")[0]      # mul's output, before the bias
        out = extra(main.global_block().var(product), h) if extra else h
        loss = fluid.layers.reduce_sum(fluid.layers.square(out))
        grads = fluid.gradients([loss], [x])
    return main, start, h, product, loss, grads[0]


def _fc_fusions(main, fetch=()):
    return [op for op in fusion.plan(main.global_block(), fetch).values()
            if op is not None and op.type == fusion_fc.FUSED_FC]


def _run(main, start, fetch):
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    return exe.run(main, feed={"x": X}, fetch_list=fetch, scope=scope)


def test_fused_fc_gives_the_two_ops_numbers():
    main, start, h, product, loss, gx = _program()
    assert len(_fc_fusions(main, [h.name, loss.name, gx.name])) == 1
    got_h, got_loss, got_gx = _run(main, start, [h, loss, gx])
    want_h = X @ W + B
    np.testing.assert_allclose(got_h, want_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_loss.ravel()[0], (want_h ** 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(got_gx, (2 * want_h) @ W.T, rtol=1e-5, atol=1e-6)


def test_product_needed_elsewhere_is_not_fused():
    # fetched
    main, start, h, product, loss, gx = _program()
    assert _fc_fusions(main, [h.name, product]) == []
    got_p, got_h = _run(main, start, [product, h])
    np.testing.assert_allclose(got_p, X @ W, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_h, X @ W + B, rtol=1e-5, atol=1e-6)
    # its gradient fetched
    assert _fc_fusions(main, [product + "@GRAD"]) == []
    got_g, _ = _run(main, start, [product + "@GRAD", gx])
    np.testing.assert_allclose(got_g, 2 * (X @ W + B), rtol=1e-5, atol=1e-6)
    # read by another op
    main, start, h, product, loss, gx = _program(lambda p, h: h + fluid.layers.scale(p, 2.0))
    assert _fc_fusions(main, [loss.name]) == []
    got_loss, = _run(main, start, [loss])
    np.testing.assert_allclose(got_loss.ravel()[0], ((X @ W + B + 2 * (X @ W)) ** 2).sum(), rtol=1e-5)
