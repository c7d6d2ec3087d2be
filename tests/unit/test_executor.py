"""Executor behaviour: feeds, fetches, scopes, caching, and errors that name what is wrong."""

import numpy as np
import pytest

import paddle_compat as fluid
from helpers import param, rand

L = fluid.layers


def _net():
    x = L.data(name="x", shape=[3])
    y = L.data(name="y", shape=[1], dtype="int64")
    h = L.fc(x, 4, act="relu")
    loss = L.mean(L.cross_entropy(L.fc(h, 2, act="softmax"), y))
    fluid.optimizer.SGD(0.1).minimize(loss)
    return loss


def _feed(n=2):
    return {"x": rand(n, 3), "y": np.zeros((n, 1), np.int64)}


def test_missing_feed_names_the_variable():
    loss = _net()
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    with pytest.raises(Exception, match="data variable 'y'.*not fed"):
        exe.run(feed={"x": rand(2, 3)}, fetch_list=[loss])


def test_startup_not_run_names_the_parameter():
    loss = _net()
    with pytest.raises(Exception, match="fc_0.w_0.*startup program"):
        fluid.Executor().run(feed=_feed(), fetch_list=[loss])


def test_unknown_feed_and_fetch_names():
    loss = _net()
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    with pytest.raises(ValueError, match="feed: 'nope' is not a variable"):
        exe.run(feed=dict(_feed(), nope=rand(2, 3)), fetch_list=[loss])
    with pytest.raises(ValueError, match="fetch_list: 'bar' is not a variable"):
        exe.run(feed=_feed(), fetch_list=["bar"])


def test_wrong_feed_shape_and_dtype_name_expected_and_given():
    x = fluid.data(name="x", shape=[None, 3])     # fluid.data's feeds are shape-checked (Paddle's rule)
    y = fluid.data(name="y", shape=[None, 1], dtype="int64")
    loss = L.mean(L.cross_entropy(L.fc(L.fc(x, 4, act="relu"), 2, act="softmax"), y))
    fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    # Paddle 1.8.5's messages (its test_feed_data_check_shape_type compares them whole)
    with pytest.raises(ValueError) as info:
        exe.run(feed={"x": rand(2, 4), "y": np.zeros((2, 1), np.int64)}, fetch_list=[loss])
    assert str(info.value) == ("The fed Variable 'x' should have dimensions = 2, shape = (-1, 3), but received "
                               "fed shape [2, 4] on each device")
    with pytest.raises(ValueError) as info:
        exe.run(feed={"x": rand(2, 3), "y": np.zeros((2, 1), np.float32)}, fetch_list=[loss])
    assert str(info.value) == "The data type of fed Variable 'y' must be 'int64', but received 'float32'"
    # nothing was lost: the program still runs afterwards
    assert np.isfinite(exe.run(feed=_feed(), fetch_list=[loss])[0]).all()


def test_op_failure_names_op_shapes_and_callsite():
    a = L.data(name="a", shape=[3])
    b = L.data(name="b", shape=[3])
    c = L.matmul(a, b, transpose_y=False)  # [N,3] x [N,3]: inner dims 3 vs N only known at run time
    exe = fluid.Executor()
    with pytest.raises(RuntimeError) as info:
        exe.run(feed={"a": rand(2, 3), "b": rand(2, 3)}, fetch_list=[c])
    msg = str(info.value)
    assert "op 'matmul'" in msg and "a[2, 3]" in msg and "b[2, 3]" in msg and "test_executor.py" in msg


def test_fetch_returns_copies_of_params_and_program_cache():
    loss = _net()
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    w_before, = exe.run(feed=_feed(), fetch_list=["fc_0.w_0"])
    exe.run(feed=_feed(), fetch_list=[loss])
    assert not np.array_equal(w_before, param("fc_0.w_0")), "fetched array must not alias the live parameter"
    n = len(exe._cache)   # startup + two distinct fetch lists
    assert n == 3
    for _ in range(3):
        exe.run(feed=_feed(), fetch_list=[loss])
    assert len(exe._cache) == n


def test_program_change_invalidates_cache():
    x = L.data(name="x", shape=[3])
    y = L.scale(x, 2.0)
    exe = fluid.Executor()
    xv = rand(2, 3)
    np.testing.assert_allclose(exe.run(feed={"x": xv}, fetch_list=[y])[0], 2 * xv, rtol=1e-6)
    z = L.scale(y, 3.0)
    np.testing.assert_allclose(exe.run(feed={"x": xv}, fetch_list=[z])[0], 6 * xv, rtol=1e-6)


def test_scopes_are_separate_and_tensor_set():
    x = L.data(name="x", shape=[2])
    y = L.fc(x, 1, bias_attr=False, param_attr=fluid.ParamAttr(name="w"))
    exe = fluid.Executor()
    s1, s2 = fluid.Scope(), fluid.Scope()
    exe.run(fluid.default_startup_program(), scope=s1)
    exe.run(fluid.default_startup_program(), scope=s2)
    s1.find_var("w").get_tensor().set(np.array([[1.0], [2.0]], np.float32), fluid.CPUPlace())
    s2.find_var("w").get_tensor().set(np.array([[3.0], [4.0]], np.float32), fluid.CPUPlace())
    xv = np.array([[1.0, 1.0]], np.float32)
    assert exe.run(feed={"x": xv}, fetch_list=[y], scope=s1)[0][0, 0] == 3.0
    with fluid.scope_guard(s2):
        assert exe.run(feed={"x": xv}, fetch_list=[y])[0][0, 0] == 7.0
    assert fluid.global_scope().find_var("w") is None
    t = s1.find_var("w").get_tensor()
    assert t.shape() == [2, 1] and np.array(t).tolist() == [[1.0], [2.0]]


def test_return_numpy_false_gives_lod_tensor():
    x = L.data(name="x", shape=[2])
    y = L.scale(x, 1.0)
    out, = fluid.Executor().run(feed={"x": rand(3, 2)}, fetch_list=[y], return_numpy=False)
    assert isinstance(out, fluid.LoDTensor) and np.array(out).shape == (3, 2)


def test_feed_lists_and_torch_tensors_are_accepted():
    import torch
    x = L.data(name="x", shape=[2])
    y = L.scale(x, 2.0)
    exe = fluid.Executor()
    assert exe.run(feed={"x": [[1.0, 2.0]]}, fetch_list=[y])[0].tolist() == [[2.0, 4.0]]
    assert exe.run(feed={"x": torch.ones(1, 2)}, fetch_list=[y])[0].tolist() == [[2.0, 2.0]]


def test_closed_executor_refuses_to_run():
    exe = fluid.Executor()
    exe.close()
    with pytest.raises(RuntimeError, match="close"):
        exe.run(fluid.Program())


def test_compiled_program_single_place_and_parallel_executor():
    loss = _net()
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    compiled = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(loss_name=loss.name)
    a = exe.run(compiled, feed=_feed(), fetch_list=[loss])[0]
    pe = fluid.ParallelExecutor(use_cuda=False, loss_name=loss.name)
    b = pe.run(fetch_list=[loss.name], feed=_feed())[0]
    assert a.shape == (1,) and b.shape == (1,) and b[0] < a[0]   # trained one more step on the same batch
    with pytest.raises(ValueError, match="already been called"):
        compiled.with_data_parallel(loss_name=loss.name)


def test_build_and_execution_strategy_fields():
    bs, es = fluid.BuildStrategy(), fluid.ExecutionStrategy()
    assert bs.reduce_strategy == fluid.BuildStrategy.ReduceStrategy.AllReduce
    assert bs.gradient_scale_strategy == fluid.BuildStrategy.GradientScaleStrategy.CoeffNumDevice
    assert bs.num_trainers == 1 and bs.trainer_id == 0 and bs.nccl_comm_num == 1
    assert es.num_threads == 0 and es.num_iteration_per_drop_scope == 100


def test_stale_lowerings_are_dropped_when_a_program_changes():
    x = L.data(name="x", shape=[3])
    y = L.scale(x, 2.0)
    exe = fluid.Executor()
    for i in range(5):
        L.scale(y, float(i))   # each edit bumps the program version
        exe.run(feed={"x": rand(1, 3)}, fetch_list=[y])
    assert len(exe._cache) == 1



def test_layers_data_feed_shape_is_not_checked():
    """Paddle checks only fluid.data's feeds: a layers.data declared [-1, 102, 1] takes a [4, 16, 1] feed
    (Paddle's transformer test feeds shorter sequences than it declares)."""
    x = L.data(name="x", shape=[102, 1])
    out = L.reduce_sum(x)
    got, = fluid.Executor().run(feed={"x": np.ones((4, 16, 1), np.float32)}, fetch_list=[out])
    assert float(np.asarray(got).reshape(-1)[0]) == 64.0


def test_a_fed_persistable_variable_is_written_into_the_scope():
    # Paddle 1.8.5: feeding a persistable variable (a learning rate) sets it in the scope; the next run without
    # the feed reads that value
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        lr = L.create_global_var(name="lr", shape=[1], value=1.0, dtype="float32", persistable=True)
        out = L.scale(lr, scale=2.0)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        assert exe.run(main, feed={"lr": np.array([0.5], "float32")}, fetch_list=[out])[0].tolist() == [1.0]
        assert np.array(scope.find_var("lr").get_tensor()).tolist() == [0.5]
        assert exe.run(main, fetch_list=[out])[0].tolist() == [1.0]


def test_a_layers_data_variable_takes_a_value_whose_cast_changes_nothing():
    # Paddle 1.8.5 feeds any dtype to a layers.data variable (its ops then run in that dtype); here a cast that
    # changes no value, or rounds a float to a float, is done, and any other refused
    a = L.data(name="a", shape=[1], dtype="float32")
    ids = L.data(name="ids", shape=[1], dtype="int64")
    out = a - L.cast(ids, "float32")
    exe = fluid.Executor()
    got = exe.run(feed={"a": np.array([[3.5], [4.25]]), "ids": np.array([[1], [2]], np.int32)}, fetch_list=[out])
    assert got[0].dtype == np.float32 and got[0].ravel().tolist() == [2.5, 2.25]
    got = exe.run(feed={"a": np.array([[0.1]]), "ids": np.array([[1]], np.int64)}, fetch_list=[out])
    assert got[0].ravel().tolist() == [np.float32(0.1) - 1]
    with pytest.raises(ValueError, match="feed 'ids': expected dtype int64, got float64"):
        exe.run(feed={"a": np.array([[0.1]]), "ids": np.array([[1.5]])}, fetch_list=[out])
    t = fluid.create_lod_tensor(np.array([[1], [2]], np.int32), [[2]], fluid.CPUPlace())
    assert exe.run(feed={"a": np.ones((2, 1), "float32"), "ids": t}, fetch_list=[out])[0].ravel().tolist() == [0, -1]


def test_integer_variables_stay_integers_in_arithmetic_with_python_numbers():
    # Paddle 1.8.5: an int64 Variable / 7 truncates toward zero; * 2 and + 1 stay int64
    x = L.data(name="x", shape=[1], dtype="int64")
    outs = [x / 7, x * 2, x + 1, x - 1]
    assert all(o.dtype == fluid.core.VarDesc.VarType.INT64 for o in outs)
    got = fluid.Executor().run(feed={"x": np.array([[3], [10], [14], [-3]], "int64")}, fetch_list=outs)
    assert [g.dtype for g in got] == [np.int64] * 4
    assert [g.ravel().tolist() for g in got] == [[0, 1, 2, 0], [6, 20, 28, -6], [4, 11, 15, -2], [2, 9, 13, -4]]
