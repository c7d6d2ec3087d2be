"""fluid.core / executor objects Paddle's own unit tests use (fluid/core_objects.py, fluid/tensor_dims.py,
ops/enforce.py), with the behaviour Paddle 1.8.5 shows for them."""

import numbers

import numpy as np
import pytest

import paddle_compat.fluid as fluid
from paddle_compat.fluid import core, executor


def test_scope_var_typed_accessors_and_tensor_array():
    scope = core.Scope()
    v = scope.var("i")
    v.set_int(10)
    assert v.is_int() and not v.is_float() and v.get_int() == 10
    f = scope.var("f")
    f.set_float(0.5)
    assert f.is_float() and f.get_float() == 0.5
    arr = scope.var("arr").get_lod_tensor_array()
    assert len(arr) == 0
    t = core.LoDTensor()
    t.set(np.array([1.0], dtype="float32"), core.CPUPlace())
    arr.append(t)
    assert scope.var("arr").get_lod_tensor_array() is arr and len(arr) == 1


def test_scope_leaves_the_pool_once():
    s = core.Scope()
    s._remove_from_pool()
    with pytest.raises(Exception, match="Deleting a nonexistent scope is not allowed"):
        s._remove_from_pool()


def test_enforce_not_met_is_what_the_runtime_raises():
    with pytest.raises(core.EnforceNotMet, match="test exception"):
        core.__unittest_throw_exception__()
    prog = fluid.Program()
    with fluid.program_guard(prog, fluid.Program()):
        x = fluid.data("x", [-1, 3])
        fluid.layers.relu(x)
    with pytest.raises(core.EnforceNotMet, match="not fed"):
        fluid.Executor(fluid.CPUPlace()).run(prog, feed={}, fetch_list=[])


def test_tensor_dims_alloc_and_elements():
    t = core.Scope().var("t").get_tensor()
    t._set_dims([3, 4])
    assert t._get_dims() == [3, 4] and t.shape() == [3, 4]
    t._alloc_int(core.CPUPlace())
    assert np.array(t).dtype == np.int32 and np.array(t).shape == (3, 4)
    assert isinstance(t._mutable_data(core.CPUPlace(), core.VarDesc.VarType.FP64), numbers.Integral)
    t.set(np.arange(12, dtype="float64").reshape(3, 4), core.CPUPlace())
    assert t._get_double_element(5) == 5.0
    t._set_double_element(5, -1.5)
    assert np.array(t)[1, 1] == -1.5
    with pytest.raises(IndexError):
        t._get_double_element(12)
    t._set_dims([4, 3])     # same size: the values are kept, reshaped (Paddle's Resize)
    assert np.array(t).shape == (4, 3) and np.array(t).reshape(-1)[5] == -1.5


def test_fetch_var_and_as_lodtensor():
    scope = core.Scope()
    prog = fluid.Program()
    with fluid.program_guard(prog, fluid.Program()):
        x = fluid.layers.create_tensor(dtype="int32", persistable=True, name="x")
        fluid.layers.assign(np.array([1, 3, 5], dtype="int32"), output=x)
    fluid.Executor(fluid.CPUPlace()).run(prog, scope=scope)
    got = executor._fetch_var("x", scope)
    assert got.dtype == np.int32 and got.tolist() == [1, 3, 5]
    assert np.array(executor._fetch_var(x, scope, return_numpy=False)).tolist() == [1, 3, 5]
    with pytest.raises(ValueError, match="Cannot find nope in scope"):
        executor._fetch_var("nope", scope)
    t = executor._as_lodtensor(2, fluid.CPUPlace(), core.VarDesc.VarType.INT64)
    assert np.array(t).tolist() == [2] and np.array(t).dtype == np.int64
    with pytest.raises(AssertionError, match="dtype should be given"):
        executor._as_lodtensor(2.0, fluid.CPUPlace())
    with pytest.raises(RuntimeError, match="LoD"):
        executor._as_lodtensor([np.zeros(2)], fluid.CPUPlace())


def test_a_python_scalar_feeds_a_shape_1_variable():
    # Paddle 1.8.5 turns a scalar into np.array([value]) of the variable's dtype (test_executor_feed_scalar)
    prog = fluid.Program()
    with fluid.program_guard(prog, fluid.Program()):
        lr = fluid.data(name="lr", shape=[1], dtype="float32")
        n = fluid.data(name="n", shape=[1], dtype="int64")
        out = fluid.layers.scale(lr, scale=2.0)
    got, got_n = fluid.Executor(fluid.CPUPlace()).run(prog, feed={"lr": 0.25, "n": 3}, fetch_list=[out, n])
    assert got.dtype == np.float32 and got.tolist() == [0.5]
    assert got_n.dtype == np.int64 and got_n.tolist() == [3]


def test_tensor_slicing_feed_list_and_lod_constructor():
    a = np.arange(27, dtype="float32").reshape(3, 3, 3)
    t = core.LoDTensor()
    t.set(a, core.CPUPlace())
    for idx in (1, slice(1, None), (slice(0, None, 1), slice(0, None, -1), slice(2, None)), slice(2, None, -2)):
        np.testing.assert_array_equal(np.array(t[idx]), a[idx])
    lt = core.LoDTensor([[2, 1]])
    lt.set(np.ones((3, 2), dtype="float32"), core.CPUPlace())
    assert lt.recursive_sequence_lengths() == [[2, 1]]
    scope = core.Scope()
    core.set_feed_variable(scope, lt, "feed", 1)
    fetched = scope.var("fetch").get_fetch_list()
    fetched.append(lt)
    assert core.get_fetch_variable(scope, "fetch", 0) is lt and scope.var("feed").value[1] is lt
    with pytest.raises(IndexError):
        core.get_fetch_variable(scope, "fetch", 3)


def test_a_hand_made_selected_rows_gradient_reaches_sgd():
    # Paddle's sparse sgd op test: Grad is a SelectedRows built in the scope; rows 0, 4, 7 move, repeated
    # rows add up, the others stay
    from paddle_compat.fluid.op import Operator
    scope, place = core.Scope(), core.CPUPlace()
    g = scope.var("Grad").get_selected_rows()
    g.set_height(10)
    g.set_rows([0, 4, 7, 4])
    g.get_tensor().set(np.ones((4, 3), dtype="float32"), place)
    scope.var("Param").get_tensor().set(np.full((10, 3), 5.0, dtype="float32"), place)
    scope.var("LearningRate").get_tensor().set(np.array([2.0], dtype="float32"), place)
    Operator("sgd", Param="Param", Grad="Grad", ParamOut="Param", LearningRate="LearningRate").run(scope, place)
    got = np.array(scope.find_var("Param").get_tensor())[:, 0]
    np.testing.assert_array_equal(got, [3, 5, 5, 5, 1, 5, 5, 3, 5, 5])
    assert isinstance(scope.find_var("Grad").value, core.SelectedRows)     # the scope keeps what the test put


def test_fuse_parameter_flags_are_recorded():
    g = core.globals()
    assert g["FLAGS_fuse_parameter_groups_size"] == 1 and g["FLAGS_fuse_parameter_memory_size"] == -1.0
    core._set_fuse_parameter_group_size(3)
    core._set_fuse_parameter_memory_size(131072)
    try:
        assert g["FLAGS_fuse_parameter_groups_size"] == 3 and g["FLAGS_fuse_parameter_memory_size"] == 131072.0
    finally:
        core._set_fuse_parameter_group_size(1)
        core._set_fuse_parameter_memory_size(-1)


def test_use_mkldnn_is_a_private_flag():
    # Paddle 1.8.5: get_flags / set_flags refuse FLAGS_use_mkldnn; op_test.py reads it from core.globals()
    assert core.globals()["FLAGS_use_mkldnn"] is False
    with pytest.raises(ValueError):
        fluid.get_flags("FLAGS_use_mkldnn")
    with pytest.raises(ValueError):
        fluid.set_flags({"FLAGS_use_mkldnn": True})


def test_place_type_and_generic_place():
    # Paddle's variant index: CUDAPlace 0, CPUPlace 1, CUDAPinnedPlace 2
    assert fluid.CPUPlace()._type() == 1 and fluid.CUDAPlace(0)._type() == 0
    assert fluid.CUDAPinnedPlace()._type() == 2
    p = core.Place()
    with pytest.raises(RuntimeError, match="set_place"):
        p._torch_device()
    p.set_place(fluid.CPUPlace())
    assert p._type() == 1 and p._torch_device() == "cpu" and p._equals(fluid.CPUPlace())
    assert not p._equals(fluid.CUDAPlace(0))


def test_an_op_fills_the_selected_rows_the_scope_holds():
    # Paddle's kernels write into the output variable's own SelectedRows (clip_by_norm / fake_init op tests)
    from paddle_compat.fluid.op import Operator
    scope, place = core.Scope(), core.CPUPlace()
    x = scope.var("X").get_selected_rows()
    x.set_height(5)
    x.set_rows([0, 2, 2])
    x.get_tensor().set(np.full((3, 2), 3.0, dtype="float32"), place)
    out = scope.var("Out").get_selected_rows()
    Operator("clip_by_norm", X="X", Out="Out", max_norm=1.0).run(scope, place)
    assert scope.find_var("Out").value is out and out.height() == 5
    dense = out.to_dense()
    assert sorted(set(out.rows())) == [0, 2]
    np.testing.assert_allclose(np.sqrt((dense ** 2).sum()), 1.0, rtol=1e-5)
    t = scope.var("Init").get_selected_rows().get_tensor()
    Operator("fake_init", Out="Init", shape=[4, 7]).run(scope, place)
    assert t._get_dims() == [4, 7]
