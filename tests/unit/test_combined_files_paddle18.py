"""Combined parameter files move both ways with Paddle 1.8.5: it writes the variables sorted by name, so a
file it wrote loads here into the right variables, and ours is byte-identical to its."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18", "combined")

pytestmark = pytest.mark.parity


def _program():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="int64")
        h = fluid.layers.fc(input=x, size=3, act="relu", param_attr=fluid.ParamAttr(name="zz_w"),
                            bias_attr=fluid.ParamAttr(name="zz_b"))
        p = fluid.layers.fc(input=h, size=2, act="softmax", param_attr=fluid.ParamAttr(name="aa_w"),
                            bias_attr=fluid.ParamAttr(name="aa_b"))
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=p, label=y))
        fluid.optimizer.Adam(learning_rate=0.01).minimize(loss)
    return main, start


@pytest.fixture
def recorded():
    with open(os.path.join(DATA, "values.json")) as f:
        return json.load(f)


@pytest.mark.parametrize("filename,which", [("params", "params"), ("persistables", "values")])
def test_paddle_combined_file_loads_into_the_right_variables(recorded, filename, which):
    main, start = _program()
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(start)
        if filename == "params":
            fluid.io.load_params(exe, DATA, main, filename=filename)
        else:
            fluid.io.load_persistables(exe, DATA, main, filename=filename)
        names = recorded["params"] if which == "params" else list(recorded["values"])
        for name in names:
            got = np.array(scope.find_var(name).get_tensor())
            np.testing.assert_array_equal(got, np.array(recorded["values"][name], dtype=got.dtype), err_msg=name)


@pytest.mark.parametrize("filename", ["params", "persistables"])
def test_our_combined_file_is_byte_identical_to_paddles(recorded, filename, tmp_path):
    main, start = _program()
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(start)
        for name, val in recorded["values"].items():
            t = scope.find_var(name).get_tensor()
            t.set(np.array(val, dtype=np.array(t).dtype), fluid.CPUPlace())
        save = fluid.io.save_params if filename == "params" else fluid.io.save_persistables
        save(exe, str(tmp_path), main, filename=filename)
    with open(os.path.join(DATA, filename), "rb") as f, open(str(tmp_path / filename), "rb") as g:
        assert g.read() == f.read()
