"""py_func, load, create_py_reader_by_data and double_buffer against Paddle 1.8.5."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

from paddle18_parity import DATA, load_family

CASES, H, PATH = load_family("io_more")
NPZ = np.load(PATH)

import make_io_more as M  # noqa: E402  (on sys.path after load_family)


@pytest.mark.parity
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_py_func_matches_paddle18(case):
    H.check(fluid, case, NPZ)


@pytest.mark.parity
def test_py_reader_by_data_matches_paddle18():
    with open(os.path.join(DATA, "io_more.json")) as fh:
        ref = json.load(fh)
    assert M.reader_run(fluid) == pytest.approx(ref["reader_sums"])


@pytest.mark.parity
def test_load_reads_a_tensor_saved_by_paddle18():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = main.global_block().create_var(name="saved_tensor", shape=[2, 3], dtype="float32", persistable=True)
        fluid.layers.load(v, os.path.join(M.LOAD_DIR, "saved_tensor"))
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        got, = exe.run(main, fetch_list=[v])
    np.testing.assert_array_equal(got, M.LOAD_VALUE)


def test_load_names_a_missing_file(tmp_path):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        v = main.global_block().create_var(name="nothing_here", shape=[1], dtype="float32", persistable=True)
        fluid.layers.load(v, str(tmp_path / "absent"))
    with fluid.scope_guard(fluid.Scope()), pytest.raises(Exception, match="absent"):
        fluid.Executor(fluid.CPUPlace()).run(main, fetch_list=[v])


def test_py_func_output_without_shape_is_rejected():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        o = main.global_block().create_var(name="o", dtype="float32", shape=[])
        with pytest.raises(ValueError, match="shape of output o"):
            fluid.layers.py_func(M.np_tanh, x, o)
