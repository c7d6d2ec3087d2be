"""sequence_conv, nets.sequence_conv_pool and cos_sim against numbers recorded from Paddle 1.8.5
(tests/data/paddle18/make_seq_ext.py): outputs and gradients w.r.t. inputs and parameters, on a LoD batch of
sequences of lengths 3, 1, 5, 2."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "seq_ext.json")) as _fh:
    REF = json.load(_fh)
D = 4


def _build(kind, attrs):
    if kind == "cos_sim":
        x = fluid.layers.data("x", shape=[D], dtype="float32")
        if attrs.get("ybatch", True):
            y = fluid.layers.data("y", shape=[D], dtype="float32")
        else:
            y = fluid.layers.data("y", shape=[1, D], dtype="float32", append_batch_size=False)
        x.stop_gradient = y.stop_gradient = False
        return [x, y], fluid.layers.cos_sim(x, y)
    x = fluid.layers.data("x", shape=[D], dtype="float32", lod_level=1)
    x.stop_gradient = False
    pa, ba = fluid.ParamAttr(name="w"), fluid.ParamAttr(name="b")
    if kind == "sequence_conv":
        return [x], fluid.layers.sequence_conv(x, param_attr=pa, bias_attr=ba, **attrs)
    return [x], fluid.nets.sequence_conv_pool(x, param_attr=pa, bias_attr=ba, **attrs)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(REF["cases"])))
def test_seq_ext_matches_paddle18(i):
    c = REF["cases"][i]
    kind = c["kind"]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        ins, out = _build(kind, c["attrs"])
        loss = fluid.layers.reduce_sum(out * out * 0.5 + out)
        wrt = ins + [main.global_block().var(p) for p in c["params"]]
        grads = fluid.gradients([loss], wrt)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        for p, v in c["params"].items():
            scope.find_var(p).get_tensor().set(np.array(v, "float32"), fluid.CPUPlace())
        feed = {k: np.array(v, "float32") for k, v in c["feed"].items()}
        if kind != "cos_sim":
            feed["x"] = fluid.create_lod_tensor(feed["x"], [REF["lens"]], fluid.CPUPlace())
        res = [np.array(r) for r in exe.run(main, feed=feed, fetch_list=[out] + grads, return_numpy=False)]
    what = "%s %s" % (kind, c["attrs"])
    np.testing.assert_allclose(res[0], np.array(c["out"], "float32"), rtol=1e-4, atol=1e-5, err_msg=what)
    got = dict(zip([v.name for v in wrt], res[1:]))
    assert set(got) == set(c["grads"])
    for name, r in c["grads"].items():
        np.testing.assert_allclose(got[name], np.array(r, "float32"), rtol=1e-4, atol=1e-5,
                                   err_msg="%s: d loss / d %s" % (what, name))


def test_sequence_conv_needs_lod_input():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.data("x", shape=[4], dtype="float32")
        with pytest.raises(ValueError, match="lod_level=0"):
            fluid.layers.sequence_conv(x, 2)


def test_cos_sim_names_mismatched_widths():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[4], dtype="float32")
        y = fluid.layers.data("y", shape=[3], dtype="float32")
        out = fluid.layers.cos_sim(x, y)
    with pytest.raises(RuntimeError, match="Y=y is"):
        fluid.Executor(fluid.CPUPlace()).run(main, feed={"x": np.ones((2, 4), "float32"),
                                                         "y": np.ones((2, 3), "float32")}, fetch_list=[out])
