"""Save/load round trips (one file per variable, combined file, inference model) and the file format."""

import os
import struct

import numpy as np
import pytest

import paddle_compat as fluid
from helpers import param, rand
from paddle_compat.ir import tensor_format

L = fluid.layers


def _trained_net(steps=2):
    x = L.data(name="x", shape=[3])
    y = L.data(name="y", shape=[1])
    pred = L.fc(L.fc(x, 4, act="tanh"), 1)
    loss = L.mean(L.square_error_cost(pred, y))
    fluid.optimizer.Adam(0.01).minimize(loss)
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    feed = {"x": rand(5, 3), "y": rand(5, 1, seed=2)}
    for _ in range(steps):
        exe.run(feed=feed, fetch_list=[loss])
    return exe, loss, pred, feed


def _snapshot(names):
    return {n: param(n).copy() for n in names}


def _persistables():
    return sorted(v.name for v in fluid.default_main_program().list_vars() if fluid.io.is_persistable(v))


def _scramble(names):
    for n in names:
        t = fluid.global_scope().find_var(n).get_tensor()
        t.set(np.zeros_like(np.array(t)), fluid.CPUPlace())


def test_save_load_persistables_one_file_per_var(tmp_path):
    exe, loss, _, feed = _trained_net()
    names = _persistables()
    assert "fc_0.w_0_moment1_0" in names and "learning_rate_0" in names
    before = _snapshot(names)
    fluid.io.save_persistables(exe, str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == names   # no temp files left behind
    _scramble(names)
    fluid.io.load_persistables(exe, str(tmp_path))
    for n in names:
        np.testing.assert_array_equal(param(n), before[n])
    # training continues identically after a reload
    a = exe.run(feed=feed, fetch_list=[loss])[0]
    fluid.io.load_persistables(exe, str(tmp_path))
    b = exe.run(feed=feed, fetch_list=[loss])[0]
    np.testing.assert_array_equal(a, b)


def test_save_params_only_and_combined_file(tmp_path):
    exe, _, _, _ = _trained_net()
    params = sorted(p.name for p in fluid.default_main_program().all_parameters())
    fluid.io.save_params(exe, str(tmp_path / "p"))
    assert sorted(os.listdir(tmp_path / "p")) == params
    before = _snapshot(params)
    fluid.io.save_params(exe, str(tmp_path / "c"), filename="all_params")
    assert os.listdir(tmp_path / "c") == ["all_params"]
    _scramble(params)
    fluid.io.load_params(exe, str(tmp_path / "c"), filename="all_params")
    for n in params:
        np.testing.assert_array_equal(param(n), before[n])


def test_save_vars_with_names_and_predicate(tmp_path):
    exe, _, _, _ = _trained_net()
    fluid.io.save_vars(exe, str(tmp_path), vars=["fc_0.w_0"])
    assert os.listdir(tmp_path) == ["fc_0.w_0"]
    fluid.io.save_vars(exe, str(tmp_path / "b"), predicate=lambda v: v.name.endswith("b_0"))
    assert sorted(os.listdir(tmp_path / "b")) == ["fc_0.b_0", "fc_1.b_0"]


def test_load_errors_name_the_problem(tmp_path):
    exe, _, _, _ = _trained_net()
    with pytest.raises(ValueError, match="no directory"):
        fluid.io.load_params(exe, str(tmp_path / "missing"))
    fluid.io.save_vars(exe, str(tmp_path), vars=["fc_0.w_0"])
    with pytest.raises(ValueError, match="no file for variable.*fc_0.b_0"):
        fluid.io.load_params(exe, str(tmp_path))
    # a file of the wrong shape
    tensor_format.atomic_write(str(tmp_path / "fc_0.b_0"),
                               lambda f: tensor_format.write_lod_tensor(f, np.zeros(7, np.float32)))
    with pytest.raises(Exception, match=r"fc_0.b_0.*expects shape \[4\].*holds \[7\]"):
        fluid.io.load_vars(exe, str(tmp_path), vars=[fluid.default_main_program().global_block().var("fc_0.b_0")])


def test_file_format_is_paddles():
    """uint32 0 | uint64 lod levels | (uint64 bytes, offsets)* | uint32 0 | int32 n | TensorDesc | data."""
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    raw = tensor_format.dumps_lod_tensor(arr, [[0, 1, 2]])
    desc = bytes([0x08, 5, 0x10, 2, 0x10, 3])   # data_type=FP32(5), dims=[2, 3]
    want = (struct.pack("<IQ", 0, 1) + struct.pack("<Q", 24) + struct.pack("<3Q", 0, 1, 2)
            + struct.pack("<Ii", 0, len(desc)) + desc + arr.tobytes())
    assert raw == want
    import io as _io
    back, lod = tensor_format.read_lod_tensor(_io.BytesIO(raw))
    np.testing.assert_array_equal(back, arr)
    assert lod == [[0, 1, 2]]
    # int64 and negative dims encode as 10-byte varints and read back
    arr2 = np.array([[-3], [4]], np.int64)
    back2, _ = tensor_format.read_lod_tensor(_io.BytesIO(tensor_format.dumps_lod_tensor(arr2)))
    np.testing.assert_array_equal(back2, arr2)


def test_truncated_file_is_reported(tmp_path):
    p = tmp_path / "w"
    p.write_bytes(tensor_format.dumps_lod_tensor(np.ones((4, 4), np.float32))[:-5])
    import io as _io
    with pytest.raises(ValueError, match="truncated"):
        tensor_format.read_lod_tensor(_io.BytesIO(p.read_bytes()), str(p))


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    path = str(tmp_path / "v")
    tensor_format.atomic_write(path, lambda f: f.write(b"old"))

    def broken(f):
        f.write(b"partial")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        tensor_format.atomic_write(path, broken)
    assert open(path, "rb").read() == b"old" and os.listdir(tmp_path) == ["v"]


def test_inference_model_round_trip(tmp_path):
    exe, loss, pred, feed = _trained_net()
    test_prog = fluid.default_main_program().clone(for_test=True)
    want = exe.run(test_prog, feed=feed, fetch_list=[pred])[0]
    fluid.io.save_inference_model(str(tmp_path), ["x"], [pred], exe)
    files = set(os.listdir(tmp_path))
    assert "__model__" in files and "fc_0.w_0" in files
    assert not any("moment" in f for f in files), "optimizer state is not part of an inference model"
    exe2 = fluid.Executor()
    with fluid.scope_guard(fluid.Scope()):
        prog, feed_names, fetch_targets = fluid.io.load_inference_model(str(tmp_path), exe2)
        assert feed_names == ["x"]
        assert not any(op.type in ("sgd", "adam") or op.type.endswith("_grad") for op in prog.global_block().ops)
        got = exe2.run(prog, feed={"x": feed["x"]}, fetch_list=fetch_targets)[0]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_clone_for_test_drops_backward_and_sets_is_test():
    x = L.data(name="x", shape=[3])
    h = L.dropout(L.fc(x, 4), 0.5)
    loss = L.mean(h)
    test_prog = fluid.default_main_program().clone(for_test=True)
    fluid.optimizer.SGD(0.1).minimize(loss)
    late_test = fluid.default_main_program().clone(for_test=True)
    for prog in (test_prog, late_test):
        types = [op.type for op in prog.global_block().ops]
        assert "sgd" not in types and not any(t.endswith("_grad") for t in types)
        assert [op.attr("is_test") for op in prog.global_block().ops if op.type == "dropout"] == [True]


def test_clone_for_test_drops_learning_rate_schedule_ops():
    """Paddle's prune_backward keeps forward ops only: a decay schedule's ops (OpRole.LRSched) are gone
    from a test clone taken after minimize, which then matches one taken before (test_program_prune_backward)."""
    x = L.data(name="x", shape=[3])
    loss = L.mean(L.fc(x, 4))
    before = fluid.default_main_program().clone(for_test=True)
    lr = L.cosine_decay(0.1, step_each_epoch=10, epochs=5)
    fluid.optimizer.SGD(lr).minimize(loss)
    after = fluid.default_main_program().clone(for_test=True)
    assert "cos" in [op.type for op in fluid.default_main_program().global_block().ops]
    assert [op.type for op in after.global_block().ops] == [op.type for op in before.global_block().ops]
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    feed = {"x": rand(2, 3)}
    np.testing.assert_array_equal(exe.run(after, feed=feed, fetch_list=[loss])[0],
                                  exe.run(before, feed=feed, fetch_list=[loss])[0])
