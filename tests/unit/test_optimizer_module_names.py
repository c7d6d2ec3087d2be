"""fluid.optimizer is a package here; the names Paddle 1.8's fluid/optimizer.py module held beside the
optimizers (scripts and Paddle's test_regularizer reach append_regularization_ops there) stay reachable."""
import paddle_compat as fluid


def test_paddle_module_names_of_fluid_optimizer():
    o = fluid.optimizer
    assert o.append_regularization_ops is fluid.regularizer.append_regularization_ops
    assert o.append_backward is fluid.backward.append_backward
    assert o.program_guard is fluid.program_guard
    for name in ("framework", "layers", "unique_name", "append_gradient_clip_ops", "Variable", "device_guard",
                 "Constant", "LayerHelper"):
        assert hasattr(o, name), name


def test_append_regularization_ops_through_fluid_optimizer_adds_the_decay():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [4])
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        params_grads = fluid.backward.append_backward(loss)
        before = len(main.global_block().ops)
        out = fluid.optimizer.append_regularization_ops(params_grads, fluid.regularizer.L2Decay(0.1))
    assert len(out) == len(params_grads)
    assert len(main.global_block().ops) > before       # decay ops appended for each gradient
