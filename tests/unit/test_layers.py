"""Each layer's forward against numpy (Paddle's semantics), and gradients where Paddle defines them."""

import numpy as np
import pytest

import paddle_compat as fluid
from helpers import numeric_grad, param, rand, run

L = fluid.layers


def data(name, shape, dtype="float32", **kw):
    return L.data(name=name, shape=shape, dtype=dtype, **kw)


def test_data_batch_rule():
    assert data("a", [3]).shape == (-1, 3)
    assert data("b", [None, 3]).shape == (-1, 3)
    assert data("c", [-1, 4]).shape == (-1, 4)
    assert data("d", [2, 3], append_batch_size=False).shape == (2, 3)
    assert fluid.data("e", [None, 5]).shape == (-1, 5)
    v = data("f", [1], dtype="int64", lod_level=1)
    assert v.lod_level == 1 and v.stop_gradient and v.is_data


def test_fc_matches_numpy_and_names():
    x = data("x", [4, 3])  # num_flatten_dims=1 flattens [4, 3] -> 12
    w = rand(12, 5, seed=1)
    b = rand(5, seed=2)
    y = L.fc(x, 5, act="relu", param_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(w)),
             bias_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(b)))
    names = sorted(p.name for p in fluid.default_main_program().all_parameters())
    assert names == ["fc_0.b_0", "fc_0.w_0"]
    xv = rand(2, 4, 3, seed=3)
    out, = run(y, {"x": xv})
    np.testing.assert_allclose(out, np.maximum(xv.reshape(2, 12) @ w + b, 0), rtol=1e-5, atol=1e-6)


def test_fc_num_flatten_dims_2_and_list_inputs():
    x = data("x", [3, 4], append_batch_size=False)
    y = L.fc(x, 2, num_flatten_dims=1)
    assert y.shape == (3, 2)
    a = data("a", [3])
    b = data("b", [5])
    z = L.fc([a, b], 4)
    assert z.shape == (-1, 4)
    ops = [op.type for op in fluid.default_main_program().global_block().ops]
    assert ops.count("mul") == 3 and "sum" in ops
    av, bv = rand(2, 3), rand(2, 5, seed=1)
    out, = run(z, {"a": av, "b": bv, "x": rand(3, 4)})
    wa, wb, bias = param("fc_1.w_0"), param("fc_1.w_1"), param("fc_1.b_0")
    np.testing.assert_allclose(out, av @ wa + bv @ wb + bias, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,fn", [("elementwise_add", np.add), ("elementwise_sub", np.subtract),
                                   ("elementwise_mul", np.multiply), ("elementwise_div", np.divide),
                                   ("elementwise_max", np.maximum), ("elementwise_min", np.minimum)])
def test_elementwise_axis_broadcast(op, fn):
    x = data("x", [2, 3, 4, 5], append_batch_size=False)
    y = data("y", [3, 4], append_batch_size=False)
    out = getattr(L, op)(x, y, axis=1)
    xv, yv = rand(2, 3, 4, 5), rand(3, 4, seed=1, low=0.5, high=1.5)
    got, = run(out, {"x": xv, "y": yv})
    np.testing.assert_allclose(got, fn(xv, yv.reshape(1, 3, 4, 1)), rtol=1e-6)


def test_elementwise_trailing_and_trimmed_dims():
    x = data("x", [2, 3], append_batch_size=False)
    y = data("y", [3, 1], append_batch_size=False)   # Paddle trims Y's trailing 1s: [3] at axis 1
    out = L.elementwise_add(x, y, axis=1)
    xv, yv = rand(2, 3), rand(3, 1, seed=1)
    got, = run(out, {"x": xv, "y": yv})
    np.testing.assert_allclose(got, xv + yv.reshape(1, 3), rtol=1e-6)


def test_variable_operators():
    x = data("x", [3])
    y = data("y", [3])
    outs = [x + y, x - y, x * y, x / y, x + 2.0, 3.0 - x, x * 0.5, x / 4.0, -x, 2.0 / y]
    cmp = [x < y, x >= y]
    xv, yv = rand(2, 3), rand(2, 3, seed=1, low=0.5, high=2)
    got = run(outs + cmp, {"x": xv, "y": yv})
    want = [xv + yv, xv - yv, xv * yv, xv / yv, xv + 2, 3 - xv, xv * 0.5, xv / 4, -xv, 2 / yv]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    np.testing.assert_array_equal(got[-2], xv < yv)
    np.testing.assert_array_equal(got[-1], xv >= yv)


@pytest.mark.parametrize("name,fn", [
    ("relu", lambda x: np.maximum(x, 0)), ("sigmoid", lambda x: 1 / (1 + np.exp(-x))), ("tanh", np.tanh),
    ("exp", np.exp), ("square", np.square), ("abs", np.abs), ("softsign", lambda x: x / (1 + np.abs(x))),
    ("leaky_relu", lambda x: np.where(x > 0, x, 0.02 * x)), ("relu6", lambda x: np.clip(x, 0, 6)),
])
def test_activations(name, fn):
    x = data("x", [5])
    xv = rand(3, 5) * 3
    got, = run(getattr(L, name)(x), {"x": xv})
    np.testing.assert_allclose(got, fn(xv), rtol=1e-5, atol=1e-6)


def test_softmax_and_axis():
    x = data("x", [4, 5])
    xv = rand(2, 4, 5)
    a, b = run([L.softmax(x), L.softmax(x, axis=1)], {"x": xv})
    e = np.exp(xv - xv.max(-1, keepdims=True))
    np.testing.assert_allclose(a, e / e.sum(-1, keepdims=True), rtol=1e-5)
    e1 = np.exp(xv - xv.max(1, keepdims=True))
    np.testing.assert_allclose(b, e1 / e1.sum(1, keepdims=True), rtol=1e-5)


def test_cross_entropy_hard_soft_and_ignore():
    p = data("p", [4])
    lab = data("lab", [1], dtype="int64")
    soft = data("soft", [4])
    hard = L.cross_entropy(p, lab)
    ign = L.cross_entropy(p, lab, ignore_index=2)
    sl = L.cross_entropy(p, soft, soft_label=True)
    pv = np.abs(rand(3, 4)) + 0.1
    pv /= pv.sum(1, keepdims=True)
    lv = np.array([[0], [2], [3]], np.int64)
    sv = np.abs(rand(3, 4, seed=2))
    h, i, s = run([hard, ign, sl], {"p": pv, "lab": lv, "soft": sv})
    want = -np.log(pv[np.arange(3), lv[:, 0]])[:, None]
    np.testing.assert_allclose(h, want, rtol=1e-5)
    np.testing.assert_allclose(i, np.where(lv == 2, 0, want), rtol=1e-5)
    np.testing.assert_allclose(s, -(sv * np.log(pv)).sum(1, keepdims=True), rtol=1e-5)


def test_softmax_with_cross_entropy():
    z = data("z", [5])
    lab = data("lab", [1], dtype="int64")
    loss, sm = L.softmax_with_cross_entropy(z, lab, return_softmax=True)
    zv = rand(4, 5) * 3
    lv = np.array([[1], [0], [4], [2]], np.int64)
    got_loss, got_sm = run([loss, sm], {"z": zv, "lab": lv})
    e = np.exp(zv - zv.max(1, keepdims=True))
    smv = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(got_sm, smv, rtol=1e-5)
    np.testing.assert_allclose(got_loss, -np.log(smv[np.arange(4), lv[:, 0]])[:, None], rtol=1e-5)


def test_square_error_and_sigmoid_ce():
    x = data("x", [3])
    y = data("y", [3])
    xv, yv = rand(2, 3), (rand(2, 3, seed=1) > 0).astype(np.float32)
    se, sce = run([L.square_error_cost(x, y), L.sigmoid_cross_entropy_with_logits(x, y)], {"x": xv, "y": yv})
    np.testing.assert_allclose(se, (xv - yv) ** 2, rtol=1e-6)
    np.testing.assert_allclose(sce, np.maximum(xv, 0) - xv * yv + np.log1p(np.exp(-np.abs(xv))), rtol=1e-5)


def test_mean_and_reductions():
    x = data("x", [3, 4], append_batch_size=False)
    xv = rand(3, 4)
    outs = run([L.mean(x), L.reduce_sum(x), L.reduce_sum(x, dim=1), L.reduce_mean(x, dim=[0], keep_dim=True),
                L.reduce_max(x, dim=-1), L.reduce_min(x)], {"x": xv})
    assert outs[0].shape == (1,) and outs[1].shape == (1,)
    np.testing.assert_allclose(outs[0], [xv.mean()], rtol=1e-6)
    np.testing.assert_allclose(outs[1], [xv.sum()], rtol=1e-6)
    np.testing.assert_allclose(outs[2], xv.sum(1), rtol=1e-6)
    np.testing.assert_allclose(outs[3], xv.mean(0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(outs[4], xv.max(-1), rtol=1e-6)
    np.testing.assert_allclose(outs[5], [xv.min()], rtol=1e-6)


def test_mul_matmul():
    x = data("x", [2, 3, 4], append_batch_size=False)
    y = data("y", [12, 5], append_batch_size=False)
    a = data("a", [2, 3, 4], append_batch_size=False)
    b = data("b", [2, 5, 4], append_batch_size=False)
    m = L.mul(x, y, x_num_col_dims=1)
    mm = L.matmul(a, b, transpose_y=True, alpha=2.0)
    assert m.shape == (2, 5) and mm.shape == (2, 3, 5)
    xv, yv, av, bv = rand(2, 3, 4), rand(12, 5, seed=1), rand(2, 3, 4, seed=2), rand(2, 5, 4, seed=3)
    got_m, got_mm = run([m, mm], {"x": xv, "y": yv, "a": av, "b": bv})
    np.testing.assert_allclose(got_m, xv.reshape(2, 12) @ yv, rtol=1e-5)
    np.testing.assert_allclose(got_mm, 2 * av @ bv.transpose(0, 2, 1), rtol=1e-5)


def test_concat_split_reshape_transpose():
    x = data("x", [6, 4], append_batch_size=False)
    y = data("y", [6, 2], append_batch_size=False)
    c = L.concat([x, y], axis=1)
    s1, s2 = L.split(x, 2, dim=0)
    t1, t2, t3 = L.split(x, [1, 1, 2], dim=1)
    r = L.reshape(x, [0, 2, -1])
    t = L.transpose(r, [2, 0, 1])
    assert c.shape == (6, 6) and r.shape == (6, 2, 2) and t.shape == (2, 6, 2)
    xv, yv = rand(6, 4), rand(6, 2, seed=1)
    got = run([c, s1, s2, t1, t3, r, t], {"x": xv, "y": yv})
    np.testing.assert_allclose(got[0], np.concatenate([xv, yv], 1))
    np.testing.assert_allclose(got[1], xv[:3])
    np.testing.assert_allclose(got[2], xv[3:])
    np.testing.assert_allclose(got[3], xv[:, :1])
    np.testing.assert_allclose(got[4], xv[:, 2:])
    np.testing.assert_allclose(got[5], xv.reshape(6, 2, 2))
    np.testing.assert_allclose(got[6], xv.reshape(6, 2, 2).transpose(2, 0, 1))


def test_scale_cast_fill_assign_sums():
    x = data("x", [3])
    outs = [L.scale(x, 2.0, 1.0), L.scale(x, 2.0, 1.0, bias_after_scale=False), L.cast(x, "int64"),
            L.fill_constant([2, 2], "float32", 3.5), L.assign(x), L.sums([x, x, x]),
            L.assign(np.arange(4, dtype=np.int64))]
    xv = rand(2, 3) * 3
    got = run(outs, {"x": xv})
    np.testing.assert_allclose(got[0], xv * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(got[1], (xv + 1) * 2, rtol=1e-6)
    assert got[2].dtype == np.int64 and (got[2] == xv.astype(np.int64)).all()
    np.testing.assert_array_equal(got[3], np.full((2, 2), 3.5, np.float32))
    np.testing.assert_array_equal(got[4], xv)
    np.testing.assert_allclose(got[5], 3 * xv, rtol=1e-6)
    np.testing.assert_array_equal(got[6], np.arange(4))


def test_topk_argmax_accuracy():
    x = data("x", [5])
    lab = data("lab", [1], dtype="int64")
    vals, idx = L.topk(x, 2)
    am = L.argmax(x, axis=1)
    acc = L.accuracy(x, lab, k=1)
    acc2 = L.accuracy(x, lab, k=2)
    xv = rand(4, 5)
    lv = np.array([[np.argmax(xv[0])], [np.argsort(-xv[1])[1]], [0], [np.argmax(xv[3])]], np.int64)
    v, i, a, a1, a2 = run([vals, idx, am, acc, acc2], {"x": xv, "lab": lv})
    np.testing.assert_allclose(v, -np.sort(-xv, 1)[:, :2], rtol=1e-6)
    np.testing.assert_array_equal(a, xv.argmax(1))
    top1 = (xv.argmax(1) == lv[:, 0]).mean()
    top2 = np.mean([lv[r, 0] in np.argsort(-xv[r])[:2] for r in range(4)])
    np.testing.assert_allclose(a1, [top1])
    np.testing.assert_allclose(a2, [top2])


def test_embedding_padding_idx():
    ids = data("ids", [1], dtype="int64")
    table = rand(6, 3)
    e = L.embedding(ids, size=[6, 3], padding_idx=2,
                    param_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(table)))
    op = fluid.default_main_program().global_block().ops[-1]
    assert op.type == "lookup_table" and op.attr("padding_idx") == 2
    iv = np.array([[0], [2], [5]], np.int64)
    got, = run(e, {"ids": iv})
    want = table[iv[:, 0]]
    want[1] = 0   # Paddle outputs zeros for the padding id
    np.testing.assert_allclose(got, want)
    assert L.embedding(ids, size=[6, 3], padding_idx=-1).block.ops[-1].attr("padding_idx") == 5


def test_conv2d_pool2d_shapes_and_values():
    import torch
    fluid.default_startup_program().random_seed = 11   # fixed weights: the checks do not depend on the draw
    img = data("img", [2, 6, 6])
    conv = L.conv2d(img, num_filters=3, filter_size=3, padding=1, stride=1, act=None)
    pool = L.pool2d(conv, pool_size=2, pool_stride=2, pool_type="max")
    avg = L.pool2d(conv, pool_size=2, pool_stride=2, pool_type="avg")
    gp = L.pool2d(conv, pool_type="avg", global_pooling=True)
    assert conv.shape == (-1, 3, 6, 6) and pool.shape == (-1, 3, 3, 3) and gp.shape == (-1, 3, 1, 1)
    xv = rand(2, 2, 6, 6)
    c, p, a, g = run([conv, pool, avg, gp], {"img": xv})
    w, b = torch.from_numpy(param("conv2d_0.w_0")), torch.from_numpy(param("conv2d_0.b_0"))
    want = torch.nn.functional.conv2d(torch.from_numpy(xv), w, b, padding=1).numpy()
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(p, want.reshape(2, 3, 3, 2, 3, 2).max((3, 5)), rtol=1e-6)
    # means of mixed-sign values can land near 0: an absolute tolerance at float32 resolution of the inputs
    np.testing.assert_allclose(a, want.reshape(2, 3, 3, 2, 3, 2).mean((3, 5)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, want.mean((2, 3), keepdims=True), rtol=1e-5, atol=1e-6)


def test_batch_norm_train_updates_biased_running_var():
    x = data("x", [3, 2, 2])
    y = L.batch_norm(x, momentum=0.9, epsilon=1e-5)
    xv = rand(4, 3, 2, 2) * 2 + 1
    got, = run(y, {"x": xv})
    mu = xv.mean((0, 2, 3), keepdims=True)
    var = xv.var((0, 2, 3), keepdims=True)
    np.testing.assert_allclose(got, (xv - mu) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(param("batch_norm_0.w_1"), 0.1 * mu.reshape(3), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(param("batch_norm_0.w_2"), 0.9 + 0.1 * var.reshape(3), rtol=1e-5)


def test_batch_norm_is_test_uses_running_stats():
    x = data("x", [3])
    y = L.batch_norm(x, is_test=True)
    xv = rand(4, 3)
    got, = run(y, {"x": xv})
    np.testing.assert_allclose(got, xv / np.sqrt(1 + 1e-5), rtol=1e-5)


def test_dropout_implementations():
    x = data("x", [1000])
    d_train = L.dropout(x, 0.3, seed=7)
    d_test = L.dropout(x, 0.3, is_test=True)
    d_up = L.dropout(x, 0.3, is_test=True, dropout_implementation="upscale_in_train")
    xv = np.ones((2, 1000), np.float32)
    tr, te, up = run([d_train, d_test, d_up], {"x": xv})
    assert set(np.unique(tr)) <= {0.0, 1.0} and 0.6 < tr.mean() < 0.8
    np.testing.assert_allclose(te, 0.7 * xv, rtol=1e-6)
    np.testing.assert_array_equal(up, xv)


def test_gradients_match_numeric():
    x = data("x", [3], stop_gradient=False)
    y = L.reduce_sum(L.tanh(L.elementwise_mul(x, x)) * 2.0)
    gx, = fluid.gradients([y], [x])
    xv = rand(2, 3)
    got, = run(gx, {"x": xv})
    f = lambda a: float((np.tanh(a.astype(np.float64) ** 2) * 2).sum())
    np.testing.assert_allclose(got, numeric_grad(f, xv.copy()), rtol=1e-3, atol=1e-4)


def test_append_backward_records_grad_ops_and_sums_repeated_uses():
    x = data("x", [3])
    h = L.fc(x, 3)
    y = L.mean(L.elementwise_add(h, h))  # h used twice -> its grad is a sum of two parts
    pg = fluid.backward.append_backward(y)
    assert sorted(p.name for p, g in pg) == ["fc_0.b_0", "fc_0.w_0"]
    assert all(g.name == p.name + "@GRAD" for p, g in pg)
    ops = fluid.default_main_program().global_block().ops
    types = [op.type for op in ops]
    assert types[types.index("fill_constant"):] == ["fill_constant", "mean_grad", "elementwise_add_grad", "sum",
                                                     "elementwise_add_grad", "mul_grad"]
    s = ops[types.index("sum")]
    assert s.output("Out") == ["fc_0.tmp_1@GRAD"] and all("@RENAME@" in n for n in s.input("X"))
    xv = rand(2, 3)
    gw, = run(pg[1][1] if pg[1][0].name == "fc_0.w_0" else pg[0][1], {"x": xv})
    # d mean(2*(xW+b)) / dW = 2 * x^T 1 / N
    np.testing.assert_allclose(gw, 2 * xv.T @ np.ones((2, 3)) / 6, rtol=1e-5)


def test_stop_gradient_blocks_flow():
    x = data("x", [3])
    h = L.fc(x, 3, bias_attr=False)
    h.stop_gradient = True
    y = L.mean(L.fc(h, 1, bias_attr=False))
    pg = fluid.backward.append_backward(y)
    assert [p.name for p, g in pg] == ["fc_1.w_0"]
    w0 = param_after = None
    fluid.optimizer.SGD(0.5).apply_gradients(pg)
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    w0 = param("fc_0.w_0")
    exe.run(feed={"x": rand(2, 3)})
    param_after = param("fc_0.w_0")
    np.testing.assert_array_equal(w0, param_after)
