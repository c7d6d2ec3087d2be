"""py_reader.queue fed by the script, without a data source or start(), against Paddle 1.8.5
(py_reader_queue.json, recorded by tests/data/paddle18/make_py_reader_queue.py)."""

import json
import os
import sys

import numpy as np
import pytest

import paddle_compat.fluid as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
from py_reader_queue_cases import run, two_passes  # noqa: E402

with open(os.path.join(DATA, "py_reader_queue.json")) as _f:
    REF = json.load(_f)


@pytest.mark.parametrize("name,threaded", [("single_thread", False), ("threaded", True)])
def test_queue_push_matches_paddle18(name, threaded):
    got, ref = run(fluid, threaded), REF[name]
    assert {k: v for k, v in got.items() if k != "runs"} == {k: v for k, v in ref.items() if k != "runs"}
    assert len(got["runs"]) == len(ref["runs"]) == 5
    for g, r in zip(got["runs"], ref["runs"]):
        assert g["x"] == r["x"] and g["label"] == r["label"]
        np.testing.assert_allclose(g["s"], r["s"], rtol=1e-5)


def test_reset_reopens_the_queue_as_paddle18():
    assert two_passes(fluid) == REF["two_passes"]


def test_push_after_close_and_wrong_arity():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        reader = fluid.layers.py_reader(capacity=2, shapes=[(-1, 3)], dtypes=["float32"])
    q = reader.queue
    assert q is reader.queue
    with pytest.raises(ValueError, match=r"queue.push: expected 1 tensors \(py_reader_\d+_data_0\), got 2"):
        q.push([np.zeros((1, 3), np.float32)] * 2)
    q.close()
    assert q.push([np.zeros((1, 3), np.float32)]) is False


def test_read_waits_with_a_deadline(monkeypatch):
    """Nothing pushed, no source, not started: the run waits FLAGS_reader_queue_timeout_ms and names the
    reader (Paddle blocks for good)."""
    monkeypatch.setenv("FLAGS_reader_queue_timeout_ms", "200")
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        reader = fluid.layers.py_reader(capacity=2, shapes=[(-1, 3)], dtypes=["float32"])
        x = fluid.layers.read_file(reader)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    with pytest.raises(Exception, match=r"py_reader_\d+, which was not started and got no batch pushed"):
        exe.run(main, fetch_list=[x])


def test_started_reader_exposes_its_thread():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        reader = fluid.layers.py_reader(capacity=2, shapes=[(-1, 3)], dtypes=["float32"])
        x = fluid.layers.read_file(reader)
    reader.decorate_paddle_reader(lambda: iter([[(np.ones(3, np.float32),)]] * 3))
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    reader.start()
    n = 0
    with pytest.raises(fluid.core.EOFException):
        while True:
            exe.run(main, fetch_list=[x])
            n += 1
    reader.thread.join(timeout=10)
    assert n == 3 and not reader.thread.is_alive()
    reader.reset()
