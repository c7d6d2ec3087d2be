"""fluid.layers.lstm (op cudnn_lstm). Paddle 1.8.5 has no CPU kernel for it, so there are no recorded numbers:
one layer is checked against the LSTM that Paddle's own op test writes out in numpy over the flat weight
(4 input matrices i, f, c, o, 4 recurrent ones, then input and recurrent biases), forward and, by finite
differences, the gradient; several layers / both directions against torch.nn.LSTM given the same weights
in cuDNN's layout."""

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.ops.defs.cudnn_lstm_ops import split_flat_weight

L = fluid.layers
T, N, I, H = 5, 3, 4, 6


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _naive(x, w, h, c):
    """One layer, one direction, from the flat weight (Paddle's op-test formula)."""
    off, mats = 0, []
    for shape in [(H, I)] * 4 + [(H, H)] * 4:
        mats.append(w[off:off + shape[0] * shape[1]].reshape(shape).T)
        off += shape[0] * shape[1]
    bs = [w[off + k * H:off + (k + 1) * H] for k in range(8)]
    wi, wf, wc, wo, ri, rf, rc, ro = mats
    outs = []
    for t in range(x.shape[0]):
        xt = x[t]
        i = _sig(xt @ wi + h @ ri + bs[0] + bs[4])
        f = _sig(xt @ wf + h @ rf + bs[1] + bs[5])
        o = _sig(xt @ wo + h @ ro + bs[3] + bs[7])
        g = np.tanh(xt @ wc + h @ rc + bs[2] + bs[6])
        c = f * c + i * g
        h = o * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def _program(layers, bidirec):
    main, startup = fluid.Program(), fluid.Program()
    dirs = 2 if bidirec else 1
    with fluid.program_guard(main, startup):
        x = L.data("x", shape=[T, N, I], dtype="float64", append_batch_size=False)
        h0 = L.data("h0", shape=[layers * dirs, N, H], dtype="float64", append_batch_size=False)
        c0 = L.data("c0", shape=[layers * dirs, N, H], dtype="float64", append_batch_size=False)
        out, lh, lc = L.lstm(x, h0, c0, T, H, layers, is_bidirec=bidirec)
        w = main.global_block().all_parameters()[0]
        loss = L.reduce_sum(L.square(out)) + L.reduce_sum(lc)
        gw, = fluid.gradients([loss], [w])
    return main, startup, [out, lh, lc, gw], w


def _feed(layers, dirs, seed=0):
    r = np.random.RandomState(seed)
    return {"x": r.uniform(-1, 1, [T, N, I]), "h0": r.uniform(-.5, .5, [layers * dirs, N, H]),
            "c0": r.uniform(-.5, .5, [layers * dirs, N, H])}


def _run(layers, bidirec, wv=None):
    main, startup, fetch, w = _program(layers, bidirec)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup)
        if wv is not None:
            scope.find_var(w.name).get_tensor().set(wv, fluid.CPUPlace())
        wv = np.array(scope.find_var(w.name).get_tensor())
        res = exe.run(main, feed=_feed(layers, 2 if bidirec else 1), fetch_list=fetch)
    return res, wv


def test_one_layer_matches_paddles_reference_formula():
    (out, lh, lc, gw), wv = _run(1, False)
    assert wv.shape == (4 * H * (I + H) + 8 * H,)
    f = _feed(1, 1)
    ref, rh, rc = _naive(f["x"], wv, f["h0"][0], f["c0"][0])
    np.testing.assert_allclose(out, ref, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(lh[0], rh, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(lc[0], rc, rtol=1e-7, atol=1e-9)

    def loss(w):
        o, _, c = _naive(f["x"], w, f["h0"][0], f["c0"][0])
        return (o ** 2).sum() + c.sum()
    eps, idx = 1e-6, np.random.RandomState(1).choice(wv.size, 12, replace=False)
    for j in idx:
        d = np.zeros_like(wv)
        d[j] = eps
        np.testing.assert_allclose(gw[j], (loss(wv + d) - loss(wv - d)) / (2 * eps), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("layers,bidirec", [(2, False), (2, True)])
def test_layers_and_directions_match_torch_lstm(layers, bidirec):
    (out, lh, lc, _), wv = _run(layers, bidirec)
    m = torch.nn.LSTM(I, H, layers, bidirectional=bidirec).double()
    params, used = split_flat_weight(torch.from_numpy(wv), I, H, layers, bidirec)
    assert used == wv.size
    with torch.no_grad():
        for p, v in zip(m._flat_weights, params):
            p.copy_(v)
    f = {k: torch.from_numpy(v) for k, v in _feed(layers, 2 if bidirec else 1).items()}
    with torch.no_grad():
        ro, (rh, rc) = m(f["x"], (f["h0"], f["c0"]))
    np.testing.assert_allclose(out, ro.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lh, rh.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lc, rc.numpy(), rtol=1e-9, atol=1e-12)


def test_wrong_init_state_shape_is_named():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = L.data("x", shape=[T, N, I], dtype="float32", append_batch_size=False)
        h0 = L.data("h0", shape=[2, N, H], dtype="float32", append_batch_size=False)
        out, _, _ = L.lstm(x, h0, h0, T, H, 1)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    with pytest.raises(Exception, match="InitH=h0 is \\[2, 3, 6\\], need \\[1, 3, 6\\]"):
        exe.run(main, feed={"x": np.zeros([T, N, I], "float32"), "h0": np.zeros([2, N, H], "float32")},
                fetch_list=[out])


def test_outputs_carry_paddles_build_time_shapes():
    """lstm's outputs get their shapes when the layer is built, as Paddle 1.8.5's InferShape gave them
    (tests/data/paddle18/lstm_shapes.json, made by make_lstm_shapes.py), so a layer after it can be built.
    On purpose a bidirectional Out is declared 2H wide, the width the op produces: Paddle's InferShape
    ignores is_bidirec (H), so an fc built on its Out failed at run time. Everything else is Paddle's."""
    import json
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18",
                        "lstm_shapes.json")
    with open(path) as f:
        cases = json.load(f)["cases"]
    assert len(cases) == 3
    for c in cases:
        main, start = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, start):
            n = c["num_layers"] * (2 if c["is_bidirec"] else 1)
            x = fluid.layers.data(name="x", shape=[5, 4, 6], dtype="float32", append_batch_size=False)
            h0 = fluid.layers.fill_constant([n, 4, 8], "float32", 0.0)
            c0 = fluid.layers.fill_constant([n, 4, 8], "float32", 0.0)
            outs = fluid.layers.lstm(x, h0, c0, max_len=5, hidden_size=8, num_layers=c["num_layers"],
                                     is_bidirec=c["is_bidirec"])
        got = [list(v.shape) for v in outs]
        want = [list(s) for s in c["shapes"]]
        if c["is_bidirec"]:
            want[0][-1] *= 2          # the difference on purpose (docstring)
        assert got == want, (c, got)
