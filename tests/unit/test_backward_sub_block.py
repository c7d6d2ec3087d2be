"""append_backward / minimize while a sub-block is current (Paddle 1.8's backward block): where the grad and
optimizer ops go, what stays current, the conditional_block_grad a cond branch gets, what clone(for_test)
keeps, variable lookup from a backward block, and training through it."""

import numpy as np
import pytest

import paddle_compat as fluid

L = fluid.layers


def _cond_net(with_minimize, lr=0.1):
    x = L.data("x", shape=[4], dtype="float32")
    label = L.data("label", shape=[1], dtype="float32")
    flag = L.data("flag", shape=[1], dtype="int32", append_batch_size=False)
    pred = L.fc(x, 1)
    sgd = fluid.optimizer.SGD(learning_rate=lr)

    def branch(k):
        def fn():
            loss = L.mean(L.scale(L.square(L.elementwise_sub(pred, label)), scale=float(k)))
            if with_minimize:
                sgd.minimize(loss)
            return loss
        return fn

    return L.cond(L.equal(flag, L.fill_constant([1], "int32", 0)), branch(1), branch(3))


def _program(with_minimize):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = _cond_net(with_minimize)
    return main, startup, loss


def test_loss_in_a_leftover_current_block_gets_a_backward_block():
    # a block left current (created, never rolled back): layers build into it, minimize still works
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        main._create_block()
        main._create_block()
        main._rollback()
        assert main.current_block_idx == 1
        x = fluid.data("x", shape=[None, 13], dtype="float32")
        loss = L.mean(L.fc(x, 10))
        ops, params_grads = fluid.optimizer.SGD(learning_rate=0.01).minimize(loss)
    assert loss.block.idx == 1
    assert main.current_block_idx == 1                   # restored after the backward block was made
    grad_block = main.block(main.block(1).backward_block_idx)
    assert grad_block.idx == 3 and grad_block.parent_idx == 0 and grad_block.forward_block_idx == 1
    assert [op.type for op in grad_block.ops] == ["fill_constant", "mean_grad", "elementwise_add_grad",
                                                  "mul_grad", "sgd", "sgd"]
    assert [op.type for op in main.block(1).ops] == ["mul", "elementwise_add", "mean"]
    assert all(op.block is grad_block for op in ops)
    assert sorted(p.name for p, _ in params_grads) == ["fc_0.b_0", "fc_0.w_0"]
    assert all(g.block is grad_block for _, g in params_grads)
    assert [p.name for p in main.all_parameters()] == ["fc_0.w_0", "fc_0.b_0"]
    assert main.block(0).backward_block_idx == -1


def test_backward_block_sees_its_forward_block_variables():
    main, _, loss = _program(True)
    grad_block = main.block(main.block(1).backward_block_idx)
    inner = [op for op in main.block(1).ops if op.type == "square"][0].output("Out")[0]
    assert grad_block._find_var_recursive(inner) is main.block(1).var(inner)
    assert main.block(0)._find_var_recursive(inner) is None


def test_cond_branch_gets_conditional_block_grad_running_its_backward_block():
    main, _, _ = _program(True)
    types = [op.type for op in main.global_block().ops]
    assert types.count("conditional_block_grad") == 2
    for i, op in enumerate(main.global_block().ops):
        if op.type != "conditional_block_grad":
            continue
        fwd = main.global_block().ops[i - 1]
        assert fwd.type == "conditional_block"
        assert op.attr("sub_block").forward_block_idx == fwd.attr("sub_block").idx
        assert op.input("Cond") == fwd.input("Cond") and op.input("Scope") == fwd.output("Scope")
        assert "fc_0.w_0" in op.input("Input") and "learning_rate_0" in op.input("Input")
    assert [(b.parent_idx, b.forward_block_idx) for b in main.blocks] == [(-1, -1), (0, -1), (0, 1), (0, -1),
                                                                        (0, 3)]


def test_clone_for_test_drops_backward_blocks_and_renumbers():
    plain = _program(False)[0].clone(for_test=True)
    pruned = _program(True)[0].clone(for_test=True)
    assert len(pruned.blocks) == len(plain.blocks) == 3
    for a, b in zip(plain.blocks, pruned.blocks):
        assert (a.idx, a.parent_idx) == (b.idx, b.parent_idx)
        assert [op.type for op in a.ops] == [op.type for op in b.ops]
        assert sorted(a.vars) == sorted(b.vars)
    subs = [op.attr("sub_block") for op in pruned.global_block().ops if op.type == "conditional_block"]
    assert [s.idx for s in subs] == [1, 2] and all(s is pruned.block(s.idx) for s in subs)
    # a plain clone keeps them
    full = _program(True)[0].clone()
    assert [b.forward_block_idx for b in full.blocks] == [-1, -1, 1, -1, 3]


def _train(main, startup, loss, flags):
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, (5, 4)).astype("float32")
    y = rng.uniform(-1, 1, (5, 1)).astype("float32")
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    out = []
    with fluid.scope_guard(scope):
        exe.run(startup)
        w = rng.uniform(-1, 1, (4, 1)).astype("float32")     # fixed start (the initializer is random)
        scope.find_var("fc_0.w_0").get_tensor().set(w, fluid.CPUPlace())
        for f in flags:
            res = exe.run(main, feed={"x": x, "label": y, "flag": np.array([f], "int32")},
                          fetch_list=[loss, "fc_0.w_0", "fc_0.b_0"])
            out.append([np.asarray(r) for r in res])
    return x, y, w, out


def test_training_matches_hand_computed_sgd():
    main, startup, loss = _program(True)
    x, y, w0, out = _train(main, startup, loss, [0, 1])
    w, b = w0, np.zeros(1, "float32")
    for k, (l, w_new, b_new) in zip([1, 3], out):
        p = x @ w + b
        np.testing.assert_allclose(l.reshape(()), k * np.mean((p - y) ** 2), rtol=1e-5)
        g = 2 * k * (p - y) / len(x)
        w, b = w - 0.1 * x.T @ g, b - 0.1 * g.sum(0)
        np.testing.assert_allclose(w_new, w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b_new, b, rtol=1e-5, atol=1e-6)


def test_test_clone_runs_forward_only():
    main, startup, loss = _program(True)
    test_prog = main.clone(for_test=True)
    _, _, w0, out = _train(test_prog, startup, loss, [0, 1])
    for _, w, _ in out:
        np.testing.assert_array_equal(w, w0)
    np.testing.assert_allclose(out[1][0], 3 * out[0][0], rtol=1e-6)     # the second branch scales by 3


def _two_layer_params(nested, steps=2):
    rng = np.random.RandomState(5)
    x = rng.uniform(-1, 1, (5, 3)).astype("float32")
    y = rng.uniform(-1, 1, (5, 1)).astype("float32")
    w0 = rng.uniform(-1, 1, (3, 2)).astype("float32")
    w1 = rng.uniform(-1, 1, (2, 1)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        xv = L.data("x", shape=[5, 3], dtype="float32", append_batch_size=False)
        yv = L.data("y", shape=[5, 1], dtype="float32", append_batch_size=False)
        init = fluid.initializer.NumpyArrayInitializer
        h = L.fc(xv, 2, param_attr=fluid.ParamAttr("w0", initializer=init(w0)), bias_attr=False)
        sgd = fluid.optimizer.SGD(0.1)

        def inner():
            o = L.fc(h, 1, param_attr=fluid.ParamAttr("w1", initializer=init(w1)), bias_attr=False)
            loss = L.mean(L.square(L.elementwise_sub(o, yv)))
            sgd.minimize(loss)
            return loss

        if nested:
            one = L.fill_constant([1], "float32", 1.0)
            zero = L.fill_constant([1], "float32", 0.0)
            yes = L.greater_than(one, zero)
            loss = L.cond(yes, lambda: L.cond(yes, inner, lambda: L.reduce_sum(h)), lambda: L.reduce_sum(h))
        else:
            loss = inner()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        for _ in range(steps):
            res = exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss, "w0", "w1"])
    return [np.asarray(r) for r in res]


def test_minimize_in_a_nested_cond_branch_trains_like_the_flat_program():
    # (Paddle 1.8.5 fails to build this one: its conditional_block of the outer branch looks for the inner
    # branch's output gradient; ours runs the inner branch's backward block from the outer branch)
    for got, want in zip(_two_layer_params(True), _two_layer_params(False)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_data_parallel_on_several_places_refuses_an_optimizer_in_control_flow():
    main, startup, loss = _program(True)
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        compiled = fluid.CompiledProgram(main).with_data_parallel(
            loss_name=loss.name, places=[fluid.CPUPlace(), fluid.CPUPlace()])
        feed = {"x": np.ones((4, 4), "float32"), "label": np.ones((4, 1), "float32"),
                "flag": np.zeros(1, "int32")}
        with pytest.raises(NotImplementedError, match="optimizer is used in control flow"):
            exe.run(compiled, feed=feed, fetch_list=[loss])
        # one place runs it as is
        one = fluid.CompiledProgram(main).with_data_parallel(loss_name=loss.name, places=[fluid.CPUPlace()])
        exe.run(one, feed=feed, fetch_list=[loss])


def test_programdesc_bytes_keep_backward_blocks_and_train_alike():
    main, startup, loss = _program(True)
    parsed = fluid.Program.parse_from_string(main.desc.serialize_to_string())
    assert [b.forward_block_idx for b in parsed.blocks] == [-1, -1, 1, -1, 3]
    ref = _train(main, startup, loss, [0, 1, 0])[3]
    got = _train(parsed, startup, loss, [0, 1, 0])[3]
    for a, b in zip(ref, got):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-6)
