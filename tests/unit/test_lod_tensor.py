"""LoDTensor, create_lod_tensor, DataFeeder, and feeding/fetching LoD through the executor."""

import numpy as np
import pytest

import paddle_compat as fluid


def test_lod_tensor_api():
    t = fluid.LoDTensor()
    t.set(np.arange(10, dtype=np.int64).reshape(5, 2), fluid.CPUPlace())
    assert t.shape() == [5, 2]
    assert t.lod() == [] and t.recursive_sequence_lengths() == []
    assert t.has_valid_recursive_sequence_lengths()
    t.set_recursive_sequence_lengths([[2, 0, 3]])
    assert t.lod() == [[0, 2, 2, 5]]
    assert t.recursive_sequence_lengths() == [[2, 0, 3]]
    assert t.has_valid_recursive_sequence_lengths()
    np.testing.assert_array_equal(np.array(t), np.arange(10).reshape(5, 2))
    t.set_lod([[0, 1, 5]])
    assert t.recursive_sequence_lengths() == [[1, 4]]
    t.set_recursive_sequence_lengths([[1, 1]])          # lengths that do not cover the rows
    assert not t.has_valid_recursive_sequence_lengths()
    with pytest.raises(ValueError, match="rows"):
        t.set_lod([[0, 1, 4]])                          # set_lod checks against the rows, as Paddle
    with pytest.raises(ValueError, match="non-decreasing"):
        t.set_lod([[0, 3, 2, 5]])
    with pytest.raises(ValueError, match=">= 0"):
        t.set_recursive_sequence_lengths([[6, -1]])


def test_two_level_lod():
    t = fluid.LoDTensor()
    t.set(np.zeros((6, 1), np.float32), fluid.CPUPlace())
    t.set_recursive_sequence_lengths([[2, 1], [1, 2, 3]])
    assert t.lod() == [[0, 2, 3], [0, 1, 3, 6]]
    assert t.has_valid_recursive_sequence_lengths()
    with pytest.raises(ValueError, match="level 0"):
        t.set_recursive_sequence_lengths([[2, 2], [1, 2, 3]])


def test_create_lod_tensor_forms():
    place = fluid.CPUPlace()
    t = fluid.create_lod_tensor([[1, 2], [3], [4, 5, 6]], [[2, 1, 3]], place)
    assert t.shape() == [6, 1] and np.array(t).dtype == np.int64
    assert t.lod() == [[0, 2, 3, 6]]
    np.testing.assert_array_equal(np.array(t).reshape(-1), [1, 2, 3, 4, 5, 6])
    a = fluid.create_lod_tensor(np.ones((5, 3), np.float32), [[2, 3]], place)
    assert a.recursive_sequence_lengths() == [[2, 3]] and a.shape() == [5, 3]
    b = fluid.create_lod_tensor(a, [[4, 1]], place)      # reuse a LoDTensor's data with new lengths
    assert b.recursive_sequence_lengths() == [[4, 1]]
    nested = fluid.create_lod_tensor([[[1, 2], [3]], [[4]]], [[2, 1], [2, 1, 1]], place)
    assert nested.lod() == [[0, 2, 3], [0, 2, 3, 4]] and nested.shape() == [4, 1]
    with pytest.raises(ValueError, match="lengths"):
        fluid.create_lod_tensor([[1, 2], [3]], [[1, 2]], place)
    with pytest.raises(ValueError, match="do not add up"):
        fluid.create_lod_tensor(np.ones((4, 1), np.float32), [[2, 3]], place)
    with pytest.raises(TypeError, match="list of levels"):
        fluid.create_lod_tensor(np.ones((4, 1), np.float32), [2, 2], place)
    r = fluid.create_random_int_lodtensor([[2, 3]], [1], place, low=0, high=9)
    assert r.shape() == [5, 1] and 0 <= np.array(r).min() and np.array(r).max() <= 9


def _ctr_vars():
    dense = fluid.layers.data(name="dense", shape=[3], dtype="float32")
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    return dense, ids, label


def test_data_feeder_paddle_rules():
    dense, ids, label = _ctr_vars()
    feeder = fluid.DataFeeder(feed_list=[dense, ids, label], place=fluid.CPUPlace())
    out = feeder.feed([([0.1, 0.2, 0.3], [7, 8, 9], [1]),
                       ([0.4, 0.5, 0.6], [5], [0]),
                       ([0.7, 0.8, 0.9], [], [1])])          # an empty id list is an empty sequence
    assert set(out) == {"dense", "ids", "label"}
    assert out["dense"].shape() == [3, 3] and np.array(out["dense"]).dtype == np.float32
    assert out["ids"].shape() == [4, 1] and out["ids"].recursive_sequence_lengths() == [[3, 1, 0]]
    np.testing.assert_array_equal(np.array(out["ids"]).reshape(-1), [7, 8, 9, 5])
    np.testing.assert_array_equal(np.array(out["label"]), [[1], [0], [1]])
    assert out["label"].lod() == []
    bare = feeder.feed([([0.1, 0.2, 0.3], [7], 1), ([0.4, 0.5, 0.6], [5], 0)])
    assert bare["label"].shape() == [2, 1]                  # bare int labels are reshaped to [N, 1]
    with pytest.raises(ValueError, match="3 variables"):
        feeder.feed([([0.1, 0.2, 0.3], [1])])
    with pytest.raises(ValueError, match="shape"):
        feeder.feed([([0.1, 0.2], [1], [0])])
    by_name = fluid.DataFeeder(feed_list=["ids"], place=fluid.CPUPlace())
    assert by_name.feed([([1, 2],)])["ids"].lod() == [[0, 2]]


def test_data_feeder_two_levels():
    words = fluid.layers.data(name="words", shape=[1], dtype="int64", lod_level=2)
    out = fluid.DataFeeder([words], fluid.CPUPlace()).feed([([[1, 2], [3]],), ([[4]],)])
    assert out["words"].recursive_sequence_lengths() == [[2, 1], [2, 1, 1]]
    assert out["words"].shape() == [4, 1]


def test_executor_feeds_and_fetches_lod():
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
    emb = fluid.layers.embedding(ids, size=[10, 2], param_attr=fluid.ParamAttr(
        name="tbl", initializer=fluid.initializer.NumpyArrayInitializer(np.arange(20, dtype=np.float32).reshape(10, 2))))
    assert emb.lod_level == 1
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    t = fluid.create_lod_tensor(np.array([[3], [1], [4]], np.int64), [[2, 1]], fluid.CPUPlace())
    out, = exe.run(feed={"ids": t}, fetch_list=[emb], return_numpy=False)
    assert out.lod() == [[0, 2, 3]] and out.shape() == [3, 2]
    np.testing.assert_array_equal(np.array(out), [[6, 7], [2, 3], [8, 9]])
    with pytest.raises(RuntimeError, match="return_numpy"):
        exe.run(feed={"ids": t}, fetch_list=[emb])
    with pytest.raises(ValueError, match="LoD variable"):
        exe.run(feed={"ids": [[3], [1]]}, fetch_list=[emb])
    bad = fluid.LoDTensor()
    bad.set(np.array([[3], [1], [4]], np.int64), fluid.CPUPlace())
    bad._holder.lod = [[0, 2]]                       # covers 2 of 3 rows
    with pytest.raises(ValueError, match="covers 2 rows"):
        exe.run(feed={"ids": bad}, fetch_list=[emb])
    # a LoD fed to a lod_level=0 variable is accepted and dropped
    prog = fluid.Program()
    with fluid.program_guard(prog):
        x = fluid.layers.data(name="x", shape=[2], dtype="float32")
        y = fluid.layers.scale(x, scale=2.0)
    xt = fluid.create_lod_tensor(np.ones((3, 2), np.float32), [[1, 2]], fluid.CPUPlace())
    r, = exe.run(prog, feed={"x": xt}, fetch_list=[y])
    np.testing.assert_array_equal(r, np.full((3, 2), 2.0, np.float32))


def test_list_feed_of_one_dict():
    x = fluid.layers.data(name="x", shape=[2], dtype="float32")
    y = fluid.layers.scale(x, scale=3.0)
    exe = fluid.Executor(fluid.CPUPlace())
    r, = exe.run(feed=[{"x": np.ones((1, 2), np.float32)}], fetch_list=[y])
    np.testing.assert_array_equal(r, [[3.0, 3.0]])
    with pytest.raises(TypeError, match="one dict"):
        exe.run(feed=[{"x": np.ones((1, 2), np.float32)}] * 2, fetch_list=[y])
