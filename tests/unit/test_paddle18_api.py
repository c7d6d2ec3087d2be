"""Small API details Paddle 1.8's own unit tests rely on: argument checks of append_backward/gradients,
backward's helper functions, Program's low-level pruning/copy methods, Variable.grad_name."""

import pytest

import paddle_compat as fluid
from paddle_compat.fluid import backward

L = fluid.layers


def _net():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data(name="x", shape=[None, 4], dtype="float32")
        label = fluid.data(name="y", shape=[None, 1], dtype="float32")
        h = L.fc(x, 3, act="relu")
        pred = L.fc(h, 1)
        loss = L.mean(L.square_error_cost(pred, label))
    return main, start, x, h, loss


def test_append_backward_checks_argument_types():
    main, _, x, _, loss = _net()
    with fluid.program_guard(main):
        with pytest.raises(TypeError, match="loss"):
            backward.append_backward(loss.name)
        with pytest.raises(TypeError, match="parameter_list"):
            backward.append_backward(loss, parameter_list="fc_0.w_0")
        with pytest.raises(TypeError, match=r"parameter_list\[1\]"):
            backward.append_backward(loss, parameter_list=["fc_0.w_0", 3])
        with pytest.raises(TypeError, match="no_grad_set"):
            backward.append_backward(loss, no_grad_set="x")
        with pytest.raises(TypeError, match="callbacks"):
            backward.append_backward(loss, callbacks=lambda block, context: None)


def test_gradients_checks_argument_types():
    main, _, x, h, loss = _net()
    with fluid.program_guard(main):
        with pytest.raises(TypeError, match="targets"):
            fluid.gradients(loss.name, x)
        with pytest.raises(TypeError, match="inputs"):
            fluid.gradients(loss, x.name)
        with pytest.raises(TypeError, match="target_gradients"):
            fluid.gradients([loss], [x], target_gradients=x.name)
        with pytest.raises(TypeError, match="no_grad_set"):
            fluid.gradients([loss], x, no_grad_set=h)
        assert fluid.gradients([loss], [x])[0].name == "x@GRAD"


def test_grad_suffix_helpers_and_stop_gradients():
    assert backward._append_grad_suffix_("w") == "w@GRAD"
    assert backward._strip_grad_suffix_("w@GRAD@RENAME@1") == "w"
    assert backward._strip_grad_suffix_("w") == "w"
    main, _, x, _, loss = _net()
    stops = backward._get_stop_gradients_(main)
    assert set(stops) == {0} and "x@GRAD" in stops[0] and "fc_0.w_0@GRAD" not in stops[0]


def test_find_op_path_follows_paddle():
    main, _, x, h, loss = _net()
    block = main.global_block()
    path = backward._find_op_path_(block, [loss], [], set())
    assert [op.type for op in path] == [op.type for op in block.ops]   # every op leads to the loss
    no_grad = set()
    path = backward._find_op_path_(block, [loss], [h], no_grad)
    # from h on: the second fc (mul, add), the cost and the mean; y (stop_gradient, off the path) is no-grad
    assert [op.type for op in path] == ["mul", "elementwise_add", "elementwise_sub", "square", "mean"]
    assert "y" in no_grad
    unused = backward._find_no_grad_vars(block, path, [loss], set())
    assert unused == set()


def test_variable_grad_name_and_create_var_shape_conflict():
    prog = fluid.Program()
    b = prog.global_block()
    w = b.create_var(name="fc.w", shape=[784, 100], dtype="float64")
    assert w.grad_name == "fc.w@GRAD"
    assert b.create_var(name="fc.w") is w
    with pytest.raises(ValueError, match="fc.w"):
        b.create_var(name="fc.w", shape=(24, 100))


def test_prune_with_input():
    main, _, x, h, loss = _net()
    with pytest.raises(ValueError, match="feeded_var_names"):
        main._prune_with_input([2, 3], [])
    pruned = main._prune_with_input([h.name], [loss])
    assert [op.type for op in pruned.global_block().ops] == ["mul", "elementwise_add", "elementwise_sub",
                                                            "square", "mean"]


def test_inference_optimize_sets_is_test():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data(name="x", shape=[None, 4], dtype="float32")
        L.dropout(L.fc(x, 3), 0.5)
    inf = main._inference_optimize()
    ops = inf.global_block().ops
    assert [op.type for op in ops] == [op.type for op in main.global_block().ops]
    assert all(op.attrs["is_test"] for op in ops if "is_test" in op.attrs)
    assert any("is_test" in op.attrs for op in ops)
    assert not any(op.attrs.get("is_test") for op in main.global_block().ops)


def test_copy_param_info_from():
    main, _, x, _, loss = _net()
    with pytest.raises(TypeError, match="Program"):
        main._copy_param_info_from("program")
    with pytest.raises(TypeError, match="Program"):
        main._copy_dist_param_info_from("program")
    other = fluid.Program()
    gb = other.global_block()
    gb.create_var(name="fc_0.w_0", shape=[4, 3], dtype="float32", persistable=True)
    assert not gb.all_parameters()
    other._copy_param_info_from(main)
    assert [p.name for p in gb.all_parameters()] == ["fc_0.w_0"]


def test_to_string_with_details_shows_variable_attributes():
    main, _, x, _, loss = _net()
    plain, detailed = main.to_string(True, False), main.to_string(False, True)
    assert len(detailed) > len(plain)
    assert "need_check_feed: True" in detailed and "trainable: True" in detailed
    assert "trainable:" not in plain


def test_optimizer_grad_clip_must_be_a_clip_object():
    with pytest.raises(TypeError, match="grad_clip"):
        fluid.optimizer.SGD(learning_rate=0.1, grad_clip="test")
    clip = fluid.clip.GradientClipByGlobalNorm(clip_norm=1.0)
    assert fluid.optimizer.SGD(learning_rate=0.1, grad_clip=clip)._grad_clip is clip
