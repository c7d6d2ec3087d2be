"""Less central Fluid 1.x pieces scripts rely on: layer_norm, slice, pad, prelu, label_smooth, fluid.nets,
fluid.metrics, reader helpers (paddle.batch), fluid.profiler; and a conv net that trains."""

import numpy as np
import pytest

import paddle_compat as fluid
from helpers import param, rand, run

L = fluid.layers


def test_layer_norm():
    x = L.data(name="x", shape=[3, 4])
    y = L.layer_norm(x, begin_norm_axis=1, epsilon=1e-5)
    xv = rand(2, 3, 4) * 3
    got, = run(y, {"x": xv})
    flat = xv.reshape(2, 12)
    want = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got, want.reshape(2, 3, 4), rtol=1e-4, atol=1e-5)
    assert param("layer_norm_0.w_0").shape == (12,)


def test_slice_pad_label_smooth_prelu():
    x = L.data(name="x", shape=[4, 5], append_batch_size=False)
    s = L.slice(x, axes=[0, 1], starts=[1, -3], ends=[3, 100])
    p = L.pad(x, [1, 0, 0, 2], pad_value=9.0)
    lab = L.data(name="lab", shape=[4], append_batch_size=True)
    sm = L.label_smooth(lab, epsilon=0.1)
    pr = L.prelu(x, mode="all")
    assert s.shape == (2, 3) and p.shape == (5, 7)
    xv = rand(4, 5)
    lv = np.eye(4, dtype=np.float32)[[0, 2]]
    gs, gp, gsm, gpr = run([s, p, sm, pr], {"x": xv, "lab": lv})
    np.testing.assert_array_equal(gs, xv[1:3, -3:])
    np.testing.assert_array_equal(gp, np.pad(xv, [(1, 0), (0, 2)], constant_values=9.0))
    np.testing.assert_allclose(gsm, 0.9 * lv + 0.1 / 4, rtol=1e-6)
    np.testing.assert_allclose(gpr, np.where(xv > 0, xv, 0.25 * xv), rtol=1e-6)


def test_nets_and_a_conv_net_trains():
    img = L.data(name="img", shape=[1, 12, 12])
    label = L.data(name="label", shape=[1], dtype="int64")
    c = fluid.nets.simple_img_conv_pool(img, num_filters=4, filter_size=3, pool_size=2, pool_stride=2, act="relu")
    g = fluid.nets.img_conv_group(c, conv_num_filter=[4, 4], pool_size=2, conv_act="relu",
                                  conv_with_batchnorm=True, pool_stride=2)
    pred = L.fc(g, 2, act="softmax")
    loss = L.mean(L.cross_entropy(pred, label))
    fluid.optimizer.Adam(0.01).minimize(loss)
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    rng = np.random.RandomState(0)
    x = rng.uniform(0, 1, (16, 1, 12, 12)).astype(np.float32)
    y = (x[:, 0, :6].mean((1, 2)) > x[:, 0, 6:].mean((1, 2))).astype(np.int64).reshape(-1, 1)
    losses = [float(exe.run(feed={"img": x, "label": y}, fetch_list=[loss])[0][0]) for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0], losses


def test_metrics():
    acc = fluid.metrics.Accuracy()
    acc.update(value=0.5, weight=2)
    acc.update(value=1.0, weight=2)
    assert acc.eval() == 0.75
    acc.reset()
    with pytest.raises(ValueError, match="no data"):
        acc.eval()
    pr, rc = fluid.metrics.Precision(), fluid.metrics.Recall()
    preds, labels = np.array([0.9, 0.2, 0.7, 0.6]), np.array([1, 0, 0, 1])
    pr.update(preds, labels)
    rc.update(preds, labels)
    assert pr.eval() == 2 / 3 and rc.eval() == 1.0
    auc = fluid.metrics.Auc("auc")
    p = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
    auc.update(p, np.array([[0], [1], [0], [1]]))
    assert auc.eval() == 1.0


def test_reader_helpers():
    def samples():
        for i in range(7):
            yield (i, i * i)
    batches = list(fluid.batch(samples, 3)())
    assert [len(b) for b in batches] == [3, 3, 1] and batches[0][1] == (1, 1)
    assert [len(b) for b in fluid.batch(samples, 3, drop_last=True)()] == [3, 3]
    shuffled = sorted(fluid.io.shuffle(samples, 4)())
    assert shuffled == list(samples())
    assert list(fluid.io.firstn(samples, 2)()) == [(0, 0), (1, 1)]
    with pytest.raises(ValueError, match="batch_size"):
        fluid.batch(samples, 0)


def test_profiler_is_accepted():
    with pytest.warns(UserWarning, match="no-op"):
        with fluid.profiler.profiler("CPU", "total"):
            pass
    with pytest.raises(ValueError, match="state"):
        fluid.profiler.start_profiler("TPU")
