"""__model__ / .pdmodel as Paddle's protobuf ProgramDesc: inference models written by Paddle 1.8.5 load
here and predict Paddle's outputs; ours round-trip; the older JSON __model__ still loads; bad files are
reported by file and variable, and leave the scope untouched."""

import json
import os
import shutil

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.ir import tensor_format as tf
from paddle_compat.ir.serialization import program_to_dict

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18", "inference")


def _predict(dirname, params_filename=None, feed=None):
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        prog, feeds, fetches = fluid.io.load_inference_model(dirname, exe, params_filename=params_filename)
        return feeds, exe.run(prog, feed={n: feed[n] for n in feeds}, fetch_list=fetches)


@pytest.mark.parity
@pytest.mark.parametrize("name,sub,params", [("mlp", "mlp", None), ("mlp", "mlp_combined", "params"),
                                             ("conv", "conv", None), ("conv", "conv_combined", "params"),
                                             ("ctr", "ctr", None), ("ctr", "ctr_combined", "params")])
def test_paddle18_inference_model_predicts_paddles_outputs(name, sub, params):
    io = np.load(os.path.join(DATA, name + "_io.npz"))
    names = json.load(open(os.path.join(DATA, name + "_names.json")))
    feed = {n: (fluid.create_lod_tensor(io["in_" + n], [io["lod_" + n].tolist()], fluid.CPUPlace())
                if "lod_" + n in io else io["in_" + n]) for n in names["feeds"]}
    feeds, outs = _predict(os.path.join(DATA, sub), params, feed)
    assert feeds == names["feeds"]
    assert len(outs) == len(names["fetches"])
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o, io["out_%d" % i], rtol=0, atol=1e-6)


def _conv_net():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        img = fluid.layers.data(name="img", shape=[2, 8, 8], dtype="float32")
        c = fluid.layers.conv2d(img, num_filters=4, filter_size=3, padding=1)
        c = fluid.layers.batch_norm(c, act="relu")
        c = fluid.layers.pool2d(c, pool_size=2, pool_stride=2, pool_type="max")
        out = fluid.layers.fc(input=c, size=3, act="softmax")
    return main, start, out


@pytest.mark.parametrize("params", [None, "params"])
def test_our_inference_model_is_a_programdesc_and_reloads(tmp_path, params):
    main, start, out = _conv_net()
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"img": np.random.RandomState(0).rand(3, 2, 8, 8).astype("float32")}
    with fluid.scope_guard(fluid.Scope()):
        exe.run(start)
        want = exe.run(main.clone(for_test=True), feed=feed, fetch_list=[out])[0]
        fluid.io.save_inference_model(str(tmp_path), ["img"], [out], exe, main_program=main,
                                      params_filename=params)
    data = open(os.path.join(str(tmp_path), "__model__"), "rb").read()
    assert data[:1] != b"{"
    prog = fluid.Program.parse_from_string(data)
    assert prog.desc.get_feed_target_names() == ["img"]
    assert prog.desc.get_fetch_target_names() == [out.name]
    assert prog.desc.serialize_to_string() == data
    feeds, got = _predict(str(tmp_path), params, feed)
    assert feeds == ["img"]
    np.testing.assert_allclose(got[0], want, rtol=0, atol=1e-6)


def test_desc_round_trip_keeps_vars_attrs_and_sub_blocks():
    p = fluid.Program()
    gb = gb0 = p.global_block()
    gb.create_var(name="x", shape=[-1, 3], dtype="int64", lod_level=2)
    gb.create_var(name="w", shape=[3, 4], dtype="float64", persistable=True)
    gb.create_var(name="rows", shape=[10, 4], dtype="float32", type=fluid.core.VarDesc.VarType.SELECTED_ROWS)
    sub = p._create_block()
    sub.create_var(name="inner", shape=[1], dtype="float32")
    sub.append_op(type="scale", inputs={"X": ["inner"]}, outputs={"Out": ["inner"]}, attrs={"scale": 2})
    p._rollback()
    attrs = {"sub_block": sub, "i": -7, "big": 2 ** 40, "f": 0.5, "s": "txt", "b": True, "ints": [1, -2],
             "floats": [0.25, 1.5], "strs": ["a", "b"], "bools": [True, False], "empty": []}
    # an op type no registry declares, so that every attribute type goes through: append_op refuses it (as
    # Paddle's does), the desc API takes it
    my = gb.desc.append_op()
    my.set_type("my_op")
    my.set_input("X", ["x"])
    my.set_input("W", ["w"])
    my.set_output("Out", ["x"])
    for k, v in attrs.items():
        my._set_attr(k, v)
    q = fluid.Program.parse_from_string(p.desc.serialize_to_string())
    assert [b.parent_idx for b in q.blocks] == [-1, 0]
    x, w, rows = (q.global_block().var(n) for n in ("x", "w", "rows"))
    assert (x.shape, x.lod_level, x.dtype, x.persistable) == ((-1, 3), 2, fluid.core.VarDesc.VarType.INT64, False)
    assert (w.shape, w.dtype, w.persistable) == ((3, 4), fluid.core.VarDesc.VarType.FP64, True)
    assert rows.type == fluid.core.VarDesc.VarType.SELECTED_ROWS and rows.shape == (10, 4)
    op = q.global_block().ops[0]
    assert op.type == "my_op" and op.input("W") == ["w"]
    assert op.attr("sub_block") is q.blocks[1]
    for k, v in attrs.items():
        if k != "sub_block":
            assert op.attr(k) == v, k
    # `scale` is declared FLOAT by Paddle: an int value goes out as a float
    inner = q.blocks[1].ops[0]
    assert inner.attr("scale") == 2.0 and isinstance(inner.attr("scale"), float)
    assert gb0 is p.global_block()


def test_pdmodel_is_a_programdesc(tmp_path):
    main, start, out = _conv_net()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(start)
        fluid.save(main, os.path.join(str(tmp_path), "m"))
    q = fluid.Program.parse_from_string(open(os.path.join(str(tmp_path), "m.pdmodel"), "rb").read())
    assert [op.type for op in q.global_block().ops] == [op.type for op in main.global_block().ops]


def test_older_json_model_still_loads(tmp_path):
    main, start, out = _conv_net()
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"img": np.random.RandomState(1).rand(2, 2, 8, 8).astype("float32")}
    d = str(tmp_path)
    with fluid.scope_guard(fluid.Scope()):
        exe.run(start)
        want = exe.run(main.clone(for_test=True), feed=feed, fetch_list=[out])[0]
        fluid.io.save_inference_model(d, ["img"], [out], exe, main_program=main)
    pruned = fluid.Program.parse_from_string(open(os.path.join(d, "__model__"), "rb").read())
    from paddle_compat.ir.proto_desc import strip_feed_fetch
    feeds, fetches = strip_feed_fetch(pruned)
    model = program_to_dict(pruned)
    model["feed_var_names"], model["fetch_var_names"] = feeds, fetches
    with open(os.path.join(d, "__model__"), "w") as f:
        json.dump(model, f)
    _, got = _predict(d, None, feed)
    np.testing.assert_allclose(got[0], want, rtol=0, atol=1e-6)


# -- bad input ------------------------------------------------------------------------------------------

def _copy(tmp_path, sub):
    d = os.path.join(str(tmp_path), sub)
    shutil.copytree(os.path.join(DATA, sub), d)
    return d


@pytest.mark.parametrize("damage", ["truncate", "corrupt"])
def test_bad_model_file_names_the_file(tmp_path, damage):
    d = _copy(tmp_path, "mlp")
    path = os.path.join(d, "__model__")
    data = open(path, "rb").read()
    data = data[:len(data) // 2] if damage == "truncate" else data[:40] + b"\xff" * 64 + data[104:]
    open(path, "wb").write(data)
    with pytest.raises(ValueError, match="__model__"):
        fluid.io.load_inference_model(d, fluid.Executor(fluid.CPUPlace()))


def _load_fails_and_scope_untouched(d, params, match):
    sentinel = np.full((6, 8), 42.0, dtype="float32")
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        scope.var("fc_0.w_0").get_tensor().set(sentinel, fluid.CPUPlace())
        # (raised from the load op, so wrapped in the executor's error that names the op)
        with pytest.raises(Exception, match=match):
            fluid.io.load_inference_model(d, fluid.Executor(fluid.CPUPlace()), params_filename=params)
        np.testing.assert_array_equal(np.array(scope.find_var("fc_0.w_0").get_tensor()), sentinel)
        loaded = [n for n in scope.local_var_names() if scope.find_var(n).is_initialized()]
        assert loaded == ["fc_0.w_0"], loaded


def _tensors(path, n):
    with open(path, "rb") as f:
        return [tf.read_lod_tensor(f, path)[0] for _ in range(n)]


def test_combined_params_with_fewer_variables(tmp_path):
    d = _copy(tmp_path, "mlp_combined")
    path = os.path.join(d, "params")
    arrays = _tensors(path, 5)          # the MLP has 6 parameters (3 fc weights and biases)
    tf.atomic_write(path, lambda f: [tf.write_lod_tensor(f, a) for a in arrays])
    _load_fails_and_scope_untouched(d, "params", r"params.*fc_2\.w_0|fc_2\.w_0.*params")


def test_combined_params_with_more_variables(tmp_path):
    d = _copy(tmp_path, "mlp_combined")
    path = os.path.join(d, "params")
    arrays = _tensors(path, 6) + [np.zeros(3, "float32")]
    tf.atomic_write(path, lambda f: [tf.write_lod_tensor(f, a) for a in arrays])
    _load_fails_and_scope_untouched(d, "params", r"params.*more tensors")


def test_dtype_mismatch_names_file_and_variable(tmp_path):
    d = _copy(tmp_path, "mlp")
    path = os.path.join(d, "fc_1.w_0")
    arr = _tensors(path, 1)[0].astype("float64")
    tf.atomic_write(path, lambda f: tf.write_lod_tensor(f, arr))
    _load_fails_and_scope_untouched(d, None, r"fc_1\.w_0.*fc_1\.w_0.*float32.*float64")


@pytest.mark.parity
def test_parse_from_string_runs_with_paddles_feed_and_fetch_ops():
    # as in Paddle: the parsed program keeps its feed/fetch ops; running it by names still works
    prog = fluid.Program.parse_from_string(open(os.path.join(DATA, "conv", "__model__"), "rb").read())
    assert [op.type for op in prog.global_block().ops][:1] == ["feed"]
    exe = fluid.Executor(fluid.CPUPlace())
    io = np.load(os.path.join(DATA, "conv_io.npz"))
    with fluid.scope_guard(fluid.Scope()):
        fluid.io.load_persistables(exe, os.path.join(DATA, "conv"), prog)
        outs = exe.run(prog, feed={"img": io["in_img"]}, fetch_list=prog.desc.get_fetch_target_names())
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o, io["out_%d" % i], rtol=0, atol=1e-6)


def test_damaged_model_bytes_fail_only_with_an_error_naming_the_file():
    from paddle_compat.ir.serialization import parse_model_file
    from paddle_compat.ir.proto_desc import strip_feed_fetch
    data = open(os.path.join(DATA, "conv", "__model__"), "rb").read()
    rng = np.random.RandomState(0)
    failures = 0
    for _ in range(300):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randint(len(b))] = rng.randint(256)
        if rng.rand() < 0.3:
            b = b[:rng.randint(len(b))]
        try:
            strip_feed_fetch(parse_model_file(bytes(b), "some/__model__"))
        except ValueError as e:
            assert "some/__model__" in str(e)
            failures += 1
    assert failures > 100       # most damage is detected (flips inside strings can still parse)
