"""Loading into a program parsed from a ProgramDesc Paddle 1.8.5 wrote (tests/data/paddle18/written_programs,
make_written_programs.py): such a program holds persistable variables but no Parameter, since the desc does
not say which are parameters. fluid.load loads every persistable variable from whichever file holds it
(1.8.5 looks for them in .pdopt only and fails: "Can not find [w] in model file"), and fluid.save writes them
to .pdopt as 1.8.5 does; load_params, which 1.8.5 lets load nothing, says what is wrong."""

import os

import numpy as np
import pytest

import paddle_compat as fluid

MODEL = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "written_programs", "fit_a_line")


def _parsed():
    with open(os.path.join(MODEL, "main.pdmodel"), "rb") as f:
        return fluid.Program.parse_from_string(f.read())


def _persistables(prog):
    return sorted(v.name for v in prog.list_vars() if fluid.io.is_persistable(v))


def _values(names):
    return {n: np.array(fluid.global_scope().find_var(n).get_tensor()) for n in names}


def test_load_params_names_what_is_wrong():
    prog = _parsed()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        with pytest.raises(ValueError, match="no parameters.*parsed from a ProgramDesc.*load_persistables"):
            fluid.io.load_params(exe, os.path.join(MODEL, "params"), prog)
        fluid.io.load_persistables(exe, os.path.join(MODEL, "params"), prog)
        names = _persistables(prog)
        assert names and all(fluid.global_scope().find_var(n) is not None for n in names)


def test_fluid_save_and_load_a_parsed_program(tmp_path):
    prog = _parsed()
    exe = fluid.Executor(fluid.CPUPlace())
    names = _persistables(prog)
    with fluid.scope_guard(fluid.Scope()):
        fluid.io.load_persistables(exe, os.path.join(MODEL, "params"), prog)
        want = _values(names)
        fluid.save(prog, str(tmp_path / "m"))
    state_params = fluid.io.load_program_state(str(tmp_path / "m"))
    assert sorted(state_params) == names          # all in .pdopt, as 1.8.5 writes them
    with fluid.scope_guard(fluid.Scope()):
        fluid.load(prog, str(tmp_path / "m"), exe)
        got = _values(names)
    for n in names:
        np.testing.assert_array_equal(got[n], want[n])
    os.unlink(str(tmp_path / "m.pdopt"))
    with fluid.scope_guard(fluid.Scope()):
        with pytest.raises(ValueError, match="does not hold|do\\(es\\) not hold"):
            fluid.load(prog, str(tmp_path / "m"), exe)
