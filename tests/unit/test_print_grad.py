"""Print's backward as Paddle 1.8 records it: a second `print` op (In: the output's @GRAD, Out: the input's
@GRAD, is_forward False, role Backward), which prints the gradient in the backward phase and passes it on;
the gradients are those of the same net without Print."""

import numpy as np

import paddle_compat as fluid

L = fluid.layers


def _net(with_print, phase="BOTH"):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[3, 4], dtype="float32")
        h = L.fc(x, size=5, act="tanh", param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.2)))
        if with_print:
            h = L.Print(h, message="hidden", print_phase=phase)
        loss = L.mean(L.fc(h, size=1, param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(-0.3))))
        params_grads = fluid.backward.append_backward(loss)
    return main, startup, loss, h, params_grads


def _grads(with_print, capsys=None, phase="BOTH"):
    main, startup, loss, h, pg = _net(with_print, phase)
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"x": np.arange(12, dtype="float32").reshape(3, 4) / 10}
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        return main, h, exe.run(main, feed=feed, fetch_list=[g for _, g in pg])


def test_print_grad_is_a_print_of_the_gradient(capsys):
    main, h, got = _grads(True)
    prints = [op for op in main.global_block().ops if op.type == "print"]
    assert len(prints) == 2
    fwd, bwd = prints
    assert bwd.input("In") == [fwd.output("Out")[0] + "@GRAD"] and bwd.output("Out") == [fwd.input("In")[0] + "@GRAD"]
    assert fwd.attr("is_forward") is True and bwd.attr("is_forward") is False
    assert bwd.attr("op_role") == 1 and bwd.attr("message") == "hidden"
    out = capsys.readouterr().out
    assert "Tensor[%s]" % fwd.input("In")[0] in out and "Tensor[%s@GRAD]" % fwd.output("Out")[0] in out
    _, _, plain = _grads(False)
    for a, b in zip(got, plain):
        np.testing.assert_array_equal(a, b)


def test_print_phase_decides_which_print_prints(capsys):
    main, _, _ = _grads(True, phase="BACKWARD")
    fwd = [op for op in main.global_block().ops if op.type == "print"][0]
    out = capsys.readouterr().out
    assert "Tensor[%s@GRAD]" % fwd.output("Out")[0] in out and "Tensor[%s]\t" % fwd.input("In")[0] not in out
