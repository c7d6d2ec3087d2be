"""sequence_slice, sequence_reshape, sequence_scatter, sequence_enumerate, row_conv and im2sequence against
numbers recorded from Paddle 1.8.5 (tests/data/paddle18/make_seq_more.py, whose case code runs here on
paddle_compat): outputs, output LoDs and gradients w.r.t. inputs and parameters; and the errors for bad LoDs."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "seq_more.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_seq_more", os.path.join(DATA, "make_seq_more.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(MK.CASES)))
def test_seq_more_matches_paddle18(i):
    kind, kw, inputs = MK.CASES[i]
    want = REF[i]
    got = MK.run(fluid, kind, kw, inputs, params=want["params"])
    what = "%s %s" % (kind, kw)
    assert got["lod"] == want["lod"], "%s: LoD %s, Paddle %s" % (what, got["lod"], want["lod"])
    np.testing.assert_allclose(np.array(got["out"]), np.array(want["out"]), rtol=1e-5, atol=1e-6, err_msg=what)
    assert set(got["grads"]) == set(want["grads"]), what
    for name, g in want["grads"].items():
        np.testing.assert_allclose(np.array(got["grads"][name]), np.array(g), rtol=1e-4, atol=1e-6,
                                   err_msg="%s: d loss / d %s" % (what, name))


def _run(build, feed):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        out = build()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        return exe.run(main, feed=feed, fetch_list=[out], return_numpy=False)


def _lod(a, lens):
    return fluid.create_lod_tensor(np.asarray(a), [lens], fluid.CPUPlace())


def test_sequence_slice_out_of_range_names_the_inputs():
    def build():
        x = fluid.layers.data("xs", shape=[2], dtype="float32", lod_level=1)
        o = fluid.layers.data("off", shape=[1], dtype="int64")
        n = fluid.layers.data("len", shape=[1], dtype="int64")
        return fluid.layers.sequence_slice(x, o, n)
    with pytest.raises(Exception, match="sequence 1 of X=xs has 1 rows; Offset=off gives 0 and Length=len gives 2"):
        _run(build, {"xs": _lod(np.ones((3, 2), "float32"), [2, 1]), "off": np.zeros((2, 1), "int64"),
                     "len": np.full((2, 1), 2, "int64")})


def test_sequence_reshape_names_the_sequence_that_does_not_divide():
    def build():
        return fluid.layers.sequence_reshape(fluid.layers.data("xr", shape=[3], dtype="float32", lod_level=1), 2)
    with pytest.raises(Exception, match=r"sequence 0 of X=xr holds 3 values \(LoD \[0, 1, 3\]"):
        _run(build, {"xr": _lod(np.ones((3, 3), "float32"), [1, 2])})


def test_two_level_lod_is_refused_with_both_levels_shown():
    def build():
        x = fluid.layers.data("xe", shape=[1], dtype="int64", lod_level=2)
        return fluid.layers.sequence_enumerate(x, 2)
    t = fluid.create_lod_tensor(np.arange(3, dtype="int64").reshape(3, 1), [[1, 1], [2, 1]], fluid.CPUPlace())
    with pytest.raises(Exception, match=r"X=xe must have one LoD level, got \[\[0, 1, 2\], \[0, 2, 3\]\]"):
        _run(build, {"xe": t})


def test_sequence_scatter_checks_rows_against_sequences():
    def build():
        x = fluid.layers.data("xd", shape=[4], dtype="float32")
        ids = fluid.layers.data("ids", shape=[1], dtype="int64", lod_level=1)
        up = fluid.layers.data("up", shape=[1], dtype="float32", lod_level=1)
        return fluid.layers.sequence_scatter(x, ids, up)
    with pytest.raises(Exception, match=r"Ids=ids has 1 sequences \(LoD \[0, 2\]\) but X=xd has 2 rows"):
        _run(build, {"xd": np.ones((2, 4), "float32"), "ids": _lod(np.zeros((2, 1), "int64"), [2]),
                     "up": _lod(np.ones((2, 1), "float32"), [2])})
