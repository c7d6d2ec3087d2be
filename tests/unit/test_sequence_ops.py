"""Sequence layers on LoD input against numpy references: forward values, output LoD, and gradients."""

import numpy as np
import pytest

import paddle_compat as fluid

PLACE = fluid.CPUPlace()


def _offsets(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def _np_pool(x, lengths, ptype, pad=0.0):
    """Reference sequence_pool: (out, max_index, d out_sum / d x as a function of a given dout)."""
    off = _offsets(lengths)
    out = np.full((len(lengths), x.shape[1]), pad, np.float32)
    index = np.full((len(lengths), x.shape[1]), -1, np.int64)
    for i, n in enumerate(lengths):
        seq = x[off[i]:off[i + 1]]
        if n == 0:
            continue
        if ptype == "sum":
            out[i] = seq.sum(0)
        elif ptype == "average":
            out[i] = seq.sum(0) / n
        elif ptype == "sqrt":
            out[i] = seq.sum(0) / np.sqrt(np.float32(n))
        elif ptype == "max":
            out[i] = seq.max(0)
            index[i] = off[i] + seq.argmax(0)       # first max on ties
        elif ptype == "first":
            out[i] = seq[0]
        elif ptype == "last":
            out[i] = seq[-1]
    return out, index


def _np_pool_grad(x, lengths, ptype, dout):
    off = _offsets(lengths)
    dx = np.zeros_like(x)
    _, index = _np_pool(x, lengths, ptype)
    for i, n in enumerate(lengths):
        if n == 0:
            continue
        if ptype == "sum":
            dx[off[i]:off[i + 1]] += dout[i]
        elif ptype == "average":
            dx[off[i]:off[i + 1]] += dout[i] / n
        elif ptype == "sqrt":
            dx[off[i]:off[i + 1]] += dout[i] / np.sqrt(n)
        elif ptype == "max":
            for j in range(x.shape[1]):
                dx[index[i, j], j] += dout[i, j]
        elif ptype == "first":
            dx[off[i]] += dout[i]
        elif ptype == "last":
            dx[off[i + 1] - 1] += dout[i]
    return dx


def _run(fetch, feed, return_numpy=True):
    exe = fluid.Executor(PLACE)
    exe.run(fluid.default_startup_program())
    return exe.run(feed=feed, fetch_list=fetch, return_numpy=return_numpy)


@pytest.mark.parametrize("ptype", ["sum", "average", "sqrt", "max", "first", "last"])
def test_sequence_pool_matches_numpy(ptype):
    rng = np.random.RandomState(0)
    lengths = [3, 0, 1, 4, 0, 2]                      # empty sequences too (Paddle 1.6+ pads them)
    x_np = rng.uniform(-1, 1, (sum(lengths), 5)).astype(np.float32)
    x_np[7] = x_np[6]                                 # a tie inside sequence 3 (max takes the first)
    dout = rng.uniform(-1, 1, (len(lengths), 5)).astype(np.float32)
    x = fluid.layers.data(name="x", shape=[5], dtype="float32", lod_level=1)
    w = fluid.layers.data(name="w", shape=[5], dtype="float32")
    pad = 0.5 if ptype != "sum" else 0.0
    out = fluid.layers.sequence_pool(x, pool_type=ptype, pad_value=pad)
    assert out.lod_level == 0
    loss = fluid.layers.reduce_sum(fluid.layers.elementwise_mul(out, w))
    dx, = fluid.gradients(loss, [x])
    feed = {"x": fluid.create_lod_tensor(x_np, [lengths], PLACE), "w": dout}
    # x@GRAD holds x's LoD (sequence_pool_grad shares it), so, as in Paddle 1.8.5, it fetches as a LoDTensor
    got, got_dx = _run([out, dx], feed, return_numpy=False)
    assert got_dx.recursive_sequence_lengths() == [lengths] and got.recursive_sequence_lengths() == []
    got, got_dx = np.array(got), np.array(got_dx)
    want, _ = _np_pool(x_np, lengths, ptype, pad)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got_dx, _np_pool_grad(x_np, lengths, ptype, dout), rtol=1e-6, atol=1e-6)


def test_sequence_pool_max_index_and_steps():
    x_np = np.array([[1, 5], [3, 5], [2, 0], [7, -1]], np.float32)
    lengths = [3, 0, 1]
    x = fluid.layers.data(name="x", shape=[2], dtype="float32", lod_level=1)
    first, last = fluid.layers.sequence_first_step(x), fluid.layers.sequence_last_step(x)
    mx = fluid.layers.sequence_pool(x, "max")
    max_index = fluid.default_main_program().global_block().ops[-1].output("MaxIndex")[0]
    f, l, m, mi = _run([first, last, mx, max_index], {"x": fluid.create_lod_tensor(x_np, [lengths], PLACE)})
    np.testing.assert_array_equal(f, [[1, 5], [0, 0], [7, -1]])
    np.testing.assert_array_equal(l, [[2, 0], [0, 0], [7, -1]])
    np.testing.assert_array_equal(m, [[3, 5], [0, 0], [7, -1]])
    np.testing.assert_array_equal(mi, [[1, 0], [-1, -1], [3, 3]])


def test_sequence_pool_keeps_upper_lod_levels():
    x_np = np.arange(12, dtype=np.float32).reshape(6, 2)
    x = fluid.layers.data(name="x", shape=[2], dtype="float32", lod_level=2)
    out = fluid.layers.sequence_pool(x, "sum")
    assert out.lod_level == 1
    t = fluid.create_lod_tensor(x_np, [[2, 1], [1, 2, 3]], PLACE)
    got, = _run([out], {"x": t}, return_numpy=False)
    assert got.lod() == [[0, 2, 3]]
    np.testing.assert_array_equal(np.array(got), [[0, 1], [6, 8], [24, 27]])


def test_sequence_softmax_matches_numpy():
    rng = np.random.RandomState(1)
    lengths = [2, 3, 1, 4]
    x_np = rng.uniform(-3, 3, (sum(lengths), 1)).astype(np.float32)
    dout = rng.uniform(-1, 1, (sum(lengths), 1)).astype(np.float32)
    x = fluid.layers.data(name="x", shape=[1], dtype="float32", lod_level=1)
    w = fluid.layers.data(name="w", shape=[1], dtype="float32", lod_level=1)
    out = fluid.layers.sequence_softmax(x)
    dx, = fluid.gradients(fluid.layers.reduce_sum(fluid.layers.elementwise_mul(out, w)), [x])
    feed = {"x": fluid.create_lod_tensor(x_np, [lengths], PLACE), "w": fluid.create_lod_tensor(dout, [lengths], PLACE)}
    got, got_dx = _run([out, dx], feed, return_numpy=False)
    assert got.lod() == [_offsets(lengths).tolist()]
    off = _offsets(lengths)
    want, want_dx = np.zeros_like(x_np), np.zeros_like(x_np)
    for i in range(len(lengths)):
        s = x_np[off[i]:off[i + 1], 0]
        e = np.exp(s - s.max())
        p = e / e.sum()
        want[off[i]:off[i + 1], 0] = p
        g = dout[off[i]:off[i + 1], 0]
        want_dx[off[i]:off[i + 1], 0] = p * (g - (p * g).sum())
    np.testing.assert_allclose(np.array(got), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.array(got_dx), want_dx, rtol=1e-5, atol=1e-6)


def test_sequence_concat_matches_numpy():
    a_np = np.arange(6, dtype=np.float32).reshape(3, 2)
    b_np = -np.arange(1, 9, dtype=np.float32).reshape(4, 2)
    a = fluid.layers.data(name="a", shape=[2], dtype="float32", lod_level=1)
    b = fluid.layers.data(name="b", shape=[2], dtype="float32", lod_level=1)
    out = fluid.layers.sequence_concat([a, b])
    w = fluid.layers.data(name="w", shape=[2], dtype="float32", lod_level=1)
    da, db = fluid.gradients(fluid.layers.reduce_sum(fluid.layers.elementwise_mul(out, w)), [a, b])
    la, lb = [1, 2, 0], [2, 0, 2]
    w_np = np.arange(14, dtype=np.float32).reshape(7, 2)
    feed = {"a": fluid.create_lod_tensor(a_np, [la], PLACE), "b": fluid.create_lod_tensor(b_np, [lb], PLACE),
            "w": fluid.create_lod_tensor(w_np, [[3, 2, 2]], PLACE)}
    got, ga, gb = _run([out, da, db], feed, return_numpy=False)
    assert got.lod() == [[0, 3, 5, 7]]
    want = np.concatenate([a_np[0:1], b_np[0:2], a_np[1:3], b_np[2:4]])
    np.testing.assert_array_equal(np.array(got), want)
    np.testing.assert_array_equal(np.array(ga), w_np[[0, 3, 4]])     # rows of `out` each a-row went to
    np.testing.assert_array_equal(np.array(gb), w_np[[1, 2, 5, 6]])


def test_sequence_concat_needs_same_number_of_sequences():
    a = fluid.layers.data(name="a", shape=[1], dtype="float32", lod_level=1)
    b = fluid.layers.data(name="b", shape=[1], dtype="float32", lod_level=1)
    out = fluid.layers.sequence_concat([a, b])
    feed = {"a": fluid.create_lod_tensor(np.ones((2, 1), np.float32), [[1, 1]], PLACE),
            "b": fluid.create_lod_tensor(np.ones((2, 1), np.float32), [[2]], PLACE)}
    with pytest.raises(RuntimeError, match="same number of sequences"):
        _run([out], feed)


# Paddle's documented sequence_expand cases (offsets in the doc, lengths here)
EXPAND_CASES = {
    "x_lod_ref0": ([[2, 2]], [[2, 2], [3, 3, 1, 1]], 0, [[0, 1, 0, 1, 2, 3, 2, 3]], [[2, 2, 2, 2]]),
    "x_lod_uneven": ([[1, 3]], [[2, 2], [3, 3, 0, 2]], 0, [[0, 0, 1, 2, 3, 1, 2, 3]], [[1, 1, 3, 3]]),
    "x_plain_last_level": (None, [[2, 1, 3]], -1, [[0, 0, 1, 2, 2, 2]], None),
    "x_plain_with_empty": (None, [[2, 0, 3]], -1, [[0, 0, 2, 2, 2]], None),
}


@pytest.mark.parametrize("case", sorted(EXPAND_CASES))
def test_sequence_expand_cases(case):
    x_lens, y_lens, ref_level, rows, out_lens = EXPAND_CASES[case]
    n_x = sum(x_lens[0]) if x_lens else len(y_lens[ref_level])
    x_np = np.arange(n_x * 2, dtype=np.float32).reshape(n_x, 2)
    y_rows = sum(y_lens[-1])
    x = fluid.layers.data(name="x", shape=[2], dtype="float32", lod_level=1 if x_lens else 0)
    y = fluid.layers.data(name="y", shape=[1], dtype="float32", lod_level=len(y_lens))
    out = fluid.layers.sequence_expand(x, y, ref_level=ref_level)
    w = fluid.layers.data(name="w", shape=[2], dtype="float32")
    x.stop_gradient = False
    dx, = fluid.gradients(fluid.layers.reduce_sum(fluid.layers.elementwise_mul(out, w)), [x])
    rows = np.array(rows[0])
    w_np = np.arange(len(rows) * 2, dtype=np.float32).reshape(len(rows), 2) + 1
    feed = {"x": fluid.create_lod_tensor(x_np, x_lens, PLACE) if x_lens else x_np,
            "y": fluid.create_lod_tensor(np.zeros((y_rows, 1), np.float32), y_lens, PLACE), "w": w_np}
    got, got_dx = _run([out, dx], feed, return_numpy=False)
    np.testing.assert_array_equal(np.array(got), x_np[rows])
    assert got.recursive_sequence_lengths() == (out_lens or [])
    want_dx = np.zeros_like(x_np)
    np.add.at(want_dx, rows, w_np)                    # each source row collects the grads of its copies
    np.testing.assert_array_equal(np.array(got_dx), want_dx)


def test_sequence_layers_need_lod_inputs():
    x = fluid.layers.data(name="x", shape=[3], dtype="float32")
    with pytest.raises(ValueError, match="lod_level=1"):
        fluid.layers.sequence_pool(x, "sum")
    with pytest.raises(ValueError, match="pool_type"):
        fluid.layers.sequence_pool(fluid.layers.data(name="s", shape=[3], dtype="float32", lod_level=1), "median")
    seq = fluid.layers.data(name="q", shape=[3], dtype="float32", lod_level=1)
    out = fluid.layers.sequence_pool(seq, "sum")
    exe = fluid.Executor(PLACE)
    prog = fluid.default_main_program()
    with pytest.raises(RuntimeError, match="carries no LoD"):
        exe.run(prog, feed={"q": np.ones((2, 3), np.float32), "x": np.ones((1, 3), np.float32),
                            "s": fluid.create_lod_tensor(np.ones((1, 3), np.float32), [[1]], PLACE)},
                fetch_list=[out])


def test_embedding_then_pool_on_lod_ids():
    """The CTR building block: lookup of LoD ids, sum pooling per sequence."""
    table = np.arange(30, dtype=np.float32).reshape(10, 3)
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
    emb = fluid.layers.embedding(ids, size=[10, 3], is_sparse=True, param_attr=fluid.ParamAttr(
        name="t", initializer=fluid.initializer.NumpyArrayInitializer(table)))
    pooled = fluid.layers.sequence_pool(emb, "sum")
    ids_np = np.array([[1], [4], [4], [9], [0]], np.int64)
    got, = _run([pooled], {"ids": fluid.create_lod_tensor(ids_np, [[3, 0, 2]], PLACE)})
    np.testing.assert_array_equal(got, [table[1] + table[4] + table[4], np.zeros(3), table[9] + table[0]])


def test_lod_that_does_not_fit_its_tensor_is_caught():
    """reshape keeps its input's LoD (Paddle's ShareLoD) even when the rows change: pooling must refuse."""
    x = fluid.layers.data(name="x", shape=[2], dtype="float32", lod_level=1)
    y = fluid.layers.reshape(x, [-1, 4])
    out = fluid.layers.sequence_pool(y, "sum")
    feed = {"x": fluid.create_lod_tensor(np.ones((4, 2), np.float32), [[1, 3]], PLACE)}
    with pytest.raises(RuntimeError, match="covers 4 rows but the tensor has 2"):
        _run([out], feed)
