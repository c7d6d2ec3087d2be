"""sequence_reverse, sequence_pad, sequence_unpad and sequence_expand_as against numbers recorded from
Paddle 1.8.5 (tests/data/paddle18/make_seq_shape.py): outputs, output LoDs and gradients."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "seq_shape.json")) as _fh:
    REF = json.load(_fh)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(REF["cases"])))
def test_seq_shape_matches_paddle18(i):
    c = REF["cases"][i]
    kind, maxlen = c["kind"], c["maxlen"]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3], dtype="float32", lod_level=1)
        x.stop_gradient = False
        e = fluid.layers.data("e", shape=[3], dtype="float32")
        e.stop_gradient = False
        fetch = []
        if kind == "reverse":
            out = fluid.layers.sequence_reverse(x)
        elif kind == "pad":
            pv = fluid.layers.assign(np.array([0.5], "float32"))
            out, length = fluid.layers.sequence_pad(x, pv, maxlen=maxlen)
            fetch = [length]
        elif kind == "pad_unpad":
            pv = fluid.layers.assign(np.array([-1.0, 0.0, 2.0], "float32"))
            padded, length = fluid.layers.sequence_pad(x, pv, maxlen=maxlen)
            out = fluid.layers.sequence_unpad(padded * 2.0, length)
        else:
            out = fluid.layers.sequence_expand_as(e, x)
        loss = fluid.layers.reduce_sum(out * out * 0.5 + out * fluid.layers.reduce_sum(out))
        gx, ge = fluid.gradients([loss], [x, e])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    feed = {"x": fluid.create_lod_tensor(np.array(REF["x"], "float32"), [REF["lens"]], fluid.CPUPlace()),
            "e": np.array(REF["e"], "float32")}
    grads = [g for g in (gx, ge) if g is not None]
    assert sorted(g.name.split("@")[0] for g in grads) == sorted(c["grads"])
    res = exe.run(main, feed=feed, fetch_list=[out] + fetch + grads, return_numpy=False)
    np.testing.assert_allclose(np.array(res[0]), c["out"], rtol=1e-5, atol=1e-6, err_msg=kind)
    assert [list(level) for level in res[0].lod()] == c["out_lod"]
    if fetch:
        np.testing.assert_array_equal(np.array(res[1]), c["length"])
    for g, v in zip(grads, res[1 + len(fetch):]):
        np.testing.assert_allclose(np.array(v), c["grads"][g.name.split("@")[0]], rtol=1e-4, atol=1e-5,
                                   err_msg="%s d/d %s" % (kind, g.name))


def test_sequence_pad_names_too_short_maxlen():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3], dtype="float32", lod_level=1)
        out, _ = fluid.layers.sequence_pad(x, fluid.layers.assign(np.array([0.0], "float32")), maxlen=2)
    feed = {"x": fluid.create_lod_tensor(np.ones((5, 3), "float32"), [[1, 4]], fluid.CPUPlace())}
    with pytest.raises(RuntimeError, match="padded_length=2 is less than the longest sequence of X=x"):
        fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=[out])
