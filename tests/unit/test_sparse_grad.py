"""Row-sparse gradients of embedding(is_sparse=True): fetching, summing, optimizer updates of only the touched
rows (checked against hand computation; Adam against Paddle 1.8.5's numbers too), clipping/regularization, and the SelectedRows helpers."""

import json
import os

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.backends import selected_rows as sr

PLACE = fluid.CPUPlace()
TABLE = np.random.RandomState(0).uniform(-1, 1, (10, 3)).astype(np.float32)
# two steps: (ids, lengths, per-sequence weights w); the loss is sum_seq w_seq . sum(table[ids of seq])
STEPS = [(np.array([[1], [4], [4], [9]], np.int64), [3, 1], np.array([[1, 2, 3], [-1, .5, 2]], np.float32)),
         (np.array([[2], [1]], np.int64), [1, 1], np.array([[.5, .5, .5], [2, -3, 1]], np.float32))]
UNTOUCHED = [0, 3, 5, 6, 7, 8]      # rows no step looks up


def _dense_grad(step):
    ids, lengths, w = STEPS[step]
    g = np.zeros_like(TABLE)
    seq = np.repeat(np.arange(len(lengths)), lengths)
    for i, s in zip(ids.reshape(-1), seq):
        g[i] += w[s]
    return g


def _net(is_sparse, regularizer=None, clip=None, lookups=1):
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
    w = fluid.layers.data(name="w", shape=[3], dtype="float32")
    attr = fluid.ParamAttr(name="table", initializer=fluid.initializer.NumpyArrayInitializer(TABLE),
                           regularizer=regularizer, gradient_clip=clip)
    pooled = None
    for _ in range(lookups):          # several lookups of one table: their row grads add up
        emb = fluid.layers.embedding(ids, size=[10, 3], is_sparse=is_sparse, param_attr=attr)
        p = fluid.layers.sequence_pool(emb, "sum")
        pooled = p if pooled is None else fluid.layers.elementwise_add(pooled, p)
    return fluid.layers.reduce_sum(fluid.layers.elementwise_mul(pooled, w))


def _feed(step):
    ids, lengths, w = STEPS[step]
    return {"ids": fluid.create_lod_tensor(ids, [lengths], PLACE), "w": w}


def _train(optimizer, is_sparse=True, steps=2, fetch_state=(), **net_kw):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        loss = _net(is_sparse, **net_kw)
        optimizer().minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(PLACE)
    exe.run(start, scope=scope)
    tables = [np.array(scope.find_var("table").get_tensor())]
    for s in range(steps):
        exe.run(main, feed=_feed(s), fetch_list=[loss], scope=scope)
        tables.append(np.array(scope.find_var("table").get_tensor()))
    state = {n: np.array(scope.find_var(n).get_tensor()) for n in fetch_state}
    return tables, state


def test_fetch_sparse_grad_dense_and_as_rows():
    loss = _net(is_sparse=True)
    assert fluid.default_main_program().global_block().var("table").type == fluid.core.VarDesc.VarType.LOD_TENSOR
    (_, grad), = fluid.backward.append_backward(loss)
    assert grad.type == fluid.core.VarDesc.VarType.SELECTED_ROWS
    exe = fluid.Executor(PLACE)
    exe.run(fluid.default_startup_program())
    dense, = exe.run(feed=_feed(0), fetch_list=[grad])
    np.testing.assert_allclose(dense, _dense_grad(0), rtol=1e-6)
    rows, = exe.run(feed=_feed(0), fetch_list=[grad], return_numpy=False)
    assert isinstance(rows, fluid.core.SelectedRows)
    assert rows.rows() == [1, 4, 4, 9] and rows.height() == 10        # one entry per lookup, in order
    w = STEPS[0][2]
    np.testing.assert_array_equal(np.array(rows.get_tensor()), w[[0, 0, 0, 1]])
    np.testing.assert_allclose(rows.to_dense(), _dense_grad(0), rtol=1e-6)


def test_sgd_updates_only_touched_rows():
    lr = 0.1
    tables, _ = _train(lambda: fluid.optimizer.SGD(lr))
    want = TABLE.copy()
    for s in range(2):
        ids, lengths, w = STEPS[s]
        seq = np.repeat(np.arange(len(lengths)), lengths)
        for i, q in zip(ids.reshape(-1), seq):       # Paddle's sparse sgd: one row entry at a time
            want[i] = want[i] - np.float32(lr) * w[q]
        np.testing.assert_allclose(tables[s + 1], want, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(tables[2][UNTOUCHED], TABLE[UNTOUCHED])   # bit-identical
    dense, _ = _train(lambda: fluid.optimizer.SGD(lr), is_sparse=False)
    np.testing.assert_allclose(tables[2], dense[2], rtol=1e-6, atol=1e-7)


def test_adagrad_merges_rows_and_updates_only_them():
    lr, eps = 0.1, 1e-6
    tables, state = _train(lambda: fluid.optimizer.Adagrad(lr, epsilon=eps), fetch_state=["table_moment_0"])
    p, m = TABLE.copy(), np.zeros_like(TABLE)
    for s in range(2):
        g = _dense_grad(s)
        rows = np.unique(STEPS[s][0])
        m[rows] += g[rows] * g[rows]
        p[rows] -= np.float32(lr) * g[rows] / (np.sqrt(m[rows]) + np.float32(eps))
    np.testing.assert_allclose(tables[2], p, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(state["table_moment_0"], m, rtol=1e-6)
    np.testing.assert_array_equal(tables[2][UNTOUCHED], TABLE[UNTOUCHED])
    assert not state["table_moment_0"][UNTOUCHED].any()
    dense, _ = _train(lambda: fluid.optimizer.Adagrad(lr, epsilon=eps), is_sparse=False)
    np.testing.assert_allclose(tables[2], dense[2], rtol=1e-6, atol=1e-7)


def _adam_reference(lazy, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    p, m1, m2 = TABLE.astype(np.float64), np.zeros(TABLE.shape), np.zeros(TABLE.shape)
    b1p, b2p = np.float32(1), np.float32(1)
    for s in range(2):
        g = _dense_grad(s).astype(np.float64)
        rows = np.unique(STEPS[s][0]) if lazy else np.arange(10)
        # Paddle keeps beta1^t, beta2^t in float32: 1 - beta2^t is off by ~5e-5 relative from float64
        b1p, b2p = b1p * np.float32(b1), b2p * np.float32(b2)
        # Paddle 1.8.5's CPU kernel for row-sparse gradients advances the pows before reading them: step t
        # uses beta^(t+1) (test_adam_matches_paddle18)
        c1, c2 = float(np.float32(1) - b1p * np.float32(b1)), float(np.float32(1) - b2p * np.float32(b2))
        lr_t = lr * np.sqrt(c2) / c1
        m1[rows] = b1 * m1[rows] + (1 - b1) * g[rows]
        m2[rows] = b2 * m2[rows] + (1 - b2) * g[rows] ** 2
        p[rows] -= lr_t * m1[rows] / (np.sqrt(m2[rows]) + eps)   # Paddle 1.8.5: epsilon unscaled
    return p, m1


@pytest.mark.parametrize("lazy", [True, False])
def test_adam_lazy_and_non_lazy(lazy):
    tables, state = _train(lambda: fluid.optimizer.Adam(0.1, lazy_mode=lazy), fetch_state=["table_moment1_0"])
    p, m1 = _adam_reference(lazy)
    np.testing.assert_allclose(tables[2], p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state["table_moment1_0"], m1, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(tables[2][UNTOUCHED], TABLE[UNTOUCHED])   # never looked up: no momentum
    moved_in_step1_only = [4, 9]                                             # row 1 is in both steps
    if lazy:
        np.testing.assert_array_equal(tables[2][moved_in_step1_only], tables[1][moved_in_step1_only])
    else:   # Paddle's default: every row's moments decay and rows with momentum keep moving
        assert (tables[2][moved_in_step1_only] != tables[1][moved_in_step1_only]).all()
        # not the dense update: that one corrects the bias with beta^t
        dense, _ = _train(lambda: fluid.optimizer.Adam(0.1), is_sparse=False)
        assert np.abs(tables[2] - dense[2]).max() > 1e-3


@pytest.mark.parity
@pytest.mark.parametrize("lazy", [True, False])
def test_adam_matches_paddle18(lazy):
    # Paddle 1.8.5's tables after each step (tests/data/paddle18/make_sparse_adam.py)
    with open(os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "sparse_adam.json")) as f:
        ref = json.load(f)
    np.testing.assert_array_equal(np.array(ref["table"], np.float32), TABLE)
    assert ref["steps"] == [[i.tolist(), lens, w.tolist()] for i, lens, w in STEPS]
    tables, _ = _train(lambda: fluid.optimizer.Adam(0.1, lazy_mode=lazy))
    for s, want in enumerate(ref["lazy" if lazy else "not_lazy"]):
        np.testing.assert_allclose(tables[s + 1], want, rtol=0, atol=1e-7, err_msg="step %d" % s)   # 1.5e-8


def test_shared_table_grads_add_up():
    tables, _ = _train(lambda: fluid.optimizer.SGD(0.1), steps=1, lookups=2)
    want = TABLE - np.float32(0.1) * 2 * _dense_grad(0)
    np.testing.assert_allclose(tables[1], want, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(tables[1][UNTOUCHED], TABLE[UNTOUCHED])


@pytest.mark.parametrize("clip", ["value", "norm", "global_norm"])
def test_clipping_sparse_grads_matches_dense(clip):
    make = {"value": lambda: fluid.clip.GradientClipByValue(max=1.5, min=-1.5),
            "norm": lambda: fluid.clip.GradientClipByNorm(clip_norm=1.0),
            "global_norm": lambda: fluid.clip.GradientClipByGlobalNorm(clip_norm=1.0)}[clip]
    sparse, _ = _train(lambda: fluid.optimizer.SGD(0.1), clip=make())
    dense, _ = _train(lambda: fluid.optimizer.SGD(0.1), is_sparse=False, clip=make())
    np.testing.assert_allclose(sparse[2], dense[2], rtol=1e-6, atol=1e-7)
    unclipped, _ = _train(lambda: fluid.optimizer.SGD(0.1))
    assert not np.allclose(sparse[2], unclipped[2])          # the clip did something
    np.testing.assert_array_equal(sparse[2][UNTOUCHED], TABLE[UNTOUCHED])


def test_l2_regularization_of_a_sparse_table():
    """Paddle 1.8: the decay term is dense, so the regularized gradient is dense and every row decays."""
    reg = fluid.regularizer.L2Decay(0.01)
    sparse, _ = _train(lambda: fluid.optimizer.SGD(0.1), regularizer=reg)
    dense, _ = _train(lambda: fluid.optimizer.SGD(0.1), is_sparse=False, regularizer=reg)
    np.testing.assert_allclose(sparse[2], dense[2], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(sparse[2][UNTOUCHED], TABLE[UNTOUCHED] * np.float32(1 - 0.1 * 0.01) ** 2, rtol=1e-6)


def test_selected_rows_helpers():
    rows = torch.tensor([5, 1, 5, 8])
    values = torch.arange(8, dtype=torch.float32).reshape(4, 2)
    t = sr.make_rows(rows, values, 10)
    assert sr.is_rows(t) and not sr.is_rows(values)
    r, v = sr.rows_values(t)
    assert r.tolist() == [5, 1, 5, 8] and torch.equal(v, values)
    r, v = sr.merge_rows(t)                  # Paddle's MergeAdd: unique rows ascending, values summed
    assert r.tolist() == [1, 5, 8]
    assert v.tolist() == [[2, 3], [4, 6], [6, 7]]
    parts = sr.split_rows(t, [4, 4, 2])      # row blocks [0,4), [4,8), [8,10), renumbered
    assert [p.shape[0] for p in parts] == [4, 4, 2]
    assert sr.rows_values(parts[0])[0].tolist() == [1]
    assert sr.rows_values(parts[1])[0].tolist() == [1, 1]
    assert sr.rows_values(parts[2])[0].tolist() == [0]
    assert torch.equal(sum(p.to_dense().sum() for p in parts), t.to_dense().sum())
    assert torch.equal(sr.scale_rows(t, 2.0).to_dense(), t.to_dense() * 2)
    with pytest.raises(ValueError, match="add up"):
        sr.split_rows(t, [4, 4])


def test_second_append_backward_in_one_program():
    """Paddle lets a program hold two backward passes (append_backward, then minimize): the second reuses
    the @RENAME@ part names of a shared parameter and goes back through the same forward."""
    w0 = np.arange(12, dtype=np.float32).reshape(6, 2) / 10.0
    ids_a = fluid.layers.data(name="a", shape=[1], dtype="int64")
    ids_b = fluid.layers.data(name="b", shape=[1], dtype="int64")
    attr = fluid.ParamAttr(name="shared", initializer=fluid.initializer.NumpyArrayInitializer(w0))
    ea = fluid.embedding(ids_a, size=[6, 2], param_attr=attr)
    eb = fluid.embedding(ids_b, size=[6, 2], param_attr=attr)
    loss = fluid.layers.reduce_sum(fluid.layers.elementwise_mul(ea, eb))
    fluid.backward.append_backward(loss)
    fluid.optimizer.SGD(1.0).minimize(loss)
    exe = fluid.Executor()
    exe.run(fluid.default_startup_program())
    exe.run(feed={"a": np.array([[1]], np.int64), "b": np.array([[2]], np.int64)})
    w = np.array(fluid.global_scope().find_var("shared").get_tensor())
    want = w0.copy()
    want[1] -= w0[2]    # d(sum(w1 * w2))/dw1 = w2, one SGD step of lr 1
    want[2] -= w0[1]
    np.testing.assert_allclose(w, want, rtol=1e-6)
