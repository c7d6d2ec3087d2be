"""dynamic_lstm, dynamic_gru and gru_unit against numbers recorded from Paddle 1.8.5
(tests/data/paddle18/make_rnn.py): outputs and gradients w.r.t. input, initial states and parameters, on a
LoD batch of three sequences of lengths 3, 1, 4 (Paddle's own weight layouts, set through the scope)."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "rnn.json")) as _fh:
    REF = json.load(_fh)
H, LENS = REF["hidden"], REF["lens"]


def _run(c):
    kind, attrs = c["kind"], c["attrs"]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x_width = {"lstm": 4 * H, "gru": 3 * H, "gru_unit": 3 * H}[kind]
        x = fluid.layers.data("x", shape=[x_width], dtype="float32", lod_level=0 if kind == "gru_unit" else 1)
        x.stop_gradient = False
        ins = {"x": x}
        for k in ("h0", "c0"):
            if k in c["feed"]:
                ins[k] = fluid.layers.data(k, shape=[H], dtype="float32")
                ins[k].stop_gradient = False
        pa, ba = fluid.ParamAttr(name="w_" + kind), fluid.ParamAttr(name="b_" + kind)
        if kind == "lstm":
            outs = list(fluid.layers.dynamic_lstm(x, 4 * H, h_0=ins.get("h0"), c_0=ins.get("c0"), param_attr=pa,
                                                  bias_attr=ba, **attrs))
        elif kind == "gru":
            outs = [fluid.layers.dynamic_gru(x, H, param_attr=pa, bias_attr=ba, h_0=ins.get("h0"), **attrs)]
        else:
            outs = list(fluid.layers.gru_unit(x, ins["h0"], 3 * H, param_attr=pa, bias_attr=ba, **attrs))
        loss = 0
        for i, o in enumerate(outs):
            wv = fluid.layers.fill_constant(shape=[1], dtype="float32", value=0.5 + 0.25 * i)
            loss = loss + fluid.layers.reduce_sum(fluid.layers.elementwise_mul(o, o * wv) + o)
        wrt = list(ins.values()) + [main.global_block().var(p) for p in c["params"]]
        grads = fluid.gradients([loss], wrt)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        for p, v in c["params"].items():
            scope.find_var(p).get_tensor().set(np.array(v, "float32"), fluid.CPUPlace())
        xv = np.array(c["feed"]["x"], "float32")
        feed = {"x": xv if kind == "gru_unit" else fluid.create_lod_tensor(xv, [LENS], fluid.CPUPlace())}
        for k in ("h0", "c0"):
            if k in c["feed"]:
                feed[k] = np.array(c["feed"][k], "float32")
        res = [np.array(r) for r in exe.run(main, feed=feed, fetch_list=outs + grads, return_numpy=False)]
    return res[:len(outs)], dict(zip([v.name for v in wrt], res[len(outs):]))


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(REF["cases"])))
def test_rnn_matches_paddle18(i):
    c = REF["cases"][i]
    outs, grads = _run(c)
    what = "%s %s" % (c["kind"], c["attrs"])
    for o, r in zip(outs, c["outs"]):
        np.testing.assert_allclose(np.asarray(o), np.array(r, "float32"), rtol=1e-4, atol=1e-5, err_msg=what)
    assert set(grads) == set(c["grads"])
    for name, r in c["grads"].items():
        np.testing.assert_allclose(np.asarray(grads[name]), np.array(r, "float32"), rtol=1e-4, atol=1e-5,
                                   err_msg="%s: d loss / d %s" % (what, name))


def test_lstm_rejects_input_without_lod():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[8], dtype="float32")
        h, _ = fluid.layers.dynamic_lstm(x, 8)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    with pytest.raises(RuntimeError, match="carries no LoD"):
        exe.run(main, feed={"x": np.ones((3, 8), "float32")}, fetch_list=[h])


def test_builders_check_sizes():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.data("x", shape=[8], dtype="float32", lod_level=1)
        with pytest.raises(ValueError, match="size must be 4"):
            fluid.layers.dynamic_lstm(x, 6)
        with pytest.raises(ValueError, match="width 8 but size=3 needs 9"):
            fluid.layers.dynamic_gru(x, 3)
        with pytest.raises(ValueError, match="gate_activation"):
            fluid.layers.dynamic_lstm(x, 8, gate_activation="softsign")
