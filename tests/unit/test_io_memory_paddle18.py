"""Saving to and loading from memory (dirname None), as Paddle 1.8: save_vars returns the combined file's
bytes, load_inference_model(None, exe, model_bytes, params_bytes) loads them; against the bytes 1.8.5
wrote (tests/data/paddle18/make_io_memory.py). Also 1.8.5's warnings: nothing to save, auc states."""

import base64
import json
import os
import warnings

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "io_memory.json")) as _fh:
    REF = json.load(_fh)


def _started():
    main, startup, y = _build()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    return main, y, exe


def _build():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[2], dtype="float32")
        init = fluid.initializer.NumpyArrayInitializer
        y = fluid.layers.fc(x, size=2,
                            param_attr=fluid.ParamAttr(name="w", initializer=init(np.array(REF["values"]["w"], "float32"))),
                            bias_attr=fluid.ParamAttr(name="b", initializer=init(np.array(REF["values"]["b"], "float32"))))
    return main, startup, y


def test_save_to_memory_gives_paddles_bytes():
    with fluid.scope_guard(fluid.Scope()):
        main, _, exe = _started()
        assert fluid.io.save_persistables(exe, None, main) == base64.b64decode(REF["params"])


def test_load_a_paddle_model_from_memory():
    model, params = base64.b64decode(REF["model"]), base64.b64decode(REF["params"])
    with fluid.scope_guard(fluid.Scope()):
        exe = fluid.Executor(fluid.CPUPlace())
        prog, feeds, fetches = fluid.io.load_inference_model(None, exe, model, params)
        assert feeds == ["x"] and len(fetches) == 1
        out = exe.run(prog, feed={"x": np.array(REF["feed"], "float32")}, fetch_list=fetches)[0]
        np.testing.assert_array_equal(out, np.array(REF["pred"], "float32"))
        with pytest.raises(ValueError, match="params cannot be None"):
            fluid.io.load_inference_model(None, exe, model, None)
        with pytest.raises(ValueError, match="more tensors"):
            fluid.io.load_vars(exe, None, prog, vars=[prog.global_block().var("w")], filename=params)
        with pytest.raises(TypeError, match="bytes"):
            fluid.io.load_vars(exe, None, prog, vars=[prog.global_block().var("w")], filename="params")


def test_a_round_trip_through_memory():
    with fluid.scope_guard(fluid.Scope()):
        main, y, exe = _started()
        params = fluid.io.save_params(exe, None, main)
        fluid.global_scope().var("w").get_tensor().set(np.zeros((2, 2), "float32"), fluid.CPUPlace())
        fluid.io.load_params(exe, None, main, filename=params)
        np.testing.assert_array_equal(np.array(fluid.global_scope().find_var("w").get_tensor()),
                                      np.array(REF["values"]["w"], "float32"))


def test_paddles_warnings(tmp_path):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[1], dtype="float32")
        plus = x + 1
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fluid.io.save_inference_model(str(tmp_path / "a"), ["x"], [plus], exe, main, "model", "params")
        assert [str(m.message) for m in w] == [
            "no variable in your model, please ensure there are any variables in your model to save"]
        assert not os.path.exists(tmp_path / "a" / "params")
    # Paddle 1.8 looks for auc in the whole program, not only in what the targets need
    with fluid.program_guard(main, startup):
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        fluid.layers.auc(input=fluid.layers.fc(x, size=2, act="softmax"), label=label)
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fluid.io.save_inference_model(str(tmp_path / "b"), ["x"], [plus], exe, main)
        assert str(w[0].message) == \
            "please ensure that you have set the auc states to zeros before saving inference model"
