"""fluid.save / fluid.load / io.load_program_state / set_program_state: Paddle 1.8's .pdparams/.pdopt files.

tests/data/paddle18/state/ holds files written by real Paddle 1.8.5 (make_state.py) after 2 Adam steps."""

import json
import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
import optimizer_cases as C  # noqa: E402


def _program():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = C.build(fluid)
        fluid.optimizer.Adam(0.05).minimize(loss)
    return main, startup, loss


def _steps(exe, main, loss, n):
    return [float(np.array(exe.run(main, feed={"x": C.X, "y": C.Y}, fetch_list=[loss])[0]).ravel()[0])
            for _ in range(n)]


@pytest.mark.parity
def test_loads_paddle18_files_and_continues_as_paddle_did():
    with open(os.path.join(DATA, "state.json")) as fh:
        ref = json.load(fh)
    path = os.path.join(DATA, "state", "adam_step2")
    assert sorted(fluid.io.load_program_state(path)) == ref["opt_names"]
    main, startup, loss = _program()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        fluid.load(main, path, exe)
        np.testing.assert_allclose(_steps(exe, main, loss, 2), ref["losses_after_load"], rtol=1e-5)


def test_save_then_load_continues_exactly(tmp_path):
    main, startup, loss = _program()
    exe = fluid.Executor(fluid.CPUPlace())
    path = str(tmp_path / "ck" / "model")
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        _steps(exe, main, loss, 2)
        fluid.save(main, path)
        straight = _steps(exe, main, loss, 2)
    assert sorted(os.listdir(str(tmp_path / "ck"))) == ["model.pdmodel", "model.pdopt", "model.pdparams"]
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        fluid.load(main, path, exe)
        assert _steps(exe, main, loss, 2) == straight
    state = fluid.io.load_program_state(path, var_list=["w1", "w1_moment1_0"])
    assert sorted(state) == ["w1", "w1_moment1_0"]


def test_bad_state_is_named(tmp_path):
    main, startup, loss = _program()
    with pytest.raises(ValueError, match="does not exist"):
        fluid.load(main, str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="'w1' has shape \\[3, 2\\], the state has \\[2, 2\\]"):
        fluid.io.set_program_state(main, {"w1": np.zeros((2, 2), "float32")})
    with pytest.raises(ValueError, match="lacks \\['nope'\\]"):
        fluid.io.load_program_state(os.path.join(DATA, "state", "adam_step2"), var_list=["nope"])


def test_files_unpickle_without_numpy2_module_paths(tmp_path):
    # Paddle 1.8 runs with numpy 1.x, which has no `numpy._core`: our pickles name only numpy.ndarray
    # (checked by hand: Paddle 1.8.5's fluid.load reads them and continues training with the same losses)
    main, startup, loss = _program()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        fluid.save(main, str(tmp_path / "m"))
    for ext in ("pdparams", "pdopt"):
        data = (tmp_path / ("m." + ext)).read_bytes()
        assert b"_core" not in data and b"ndarray" in data
