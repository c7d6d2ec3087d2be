"""Non-lazy Adam with a row-sparse gradient (Paddle 1.8.5's default for embedding(is_sparse=True)) runs as
one in-place pass over the table plus the gradient's rows, not as the dense update of a densified gradient.
Both must give the same bits: every row's moments decay, the gradient's rows get the gradient term, every
row with momentum moves. (Paddle 1.8.5's own numbers: test_sparse_grad.test_adam_matches_paddle18.)"""

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.backends.lowering.kernels import optimizer_ops

H, D, STEPS, SEQS = 301, 7, 100, 6


def _train(monkeypatch, whole_table, slice_elems=64, dtype="float32"):
    calls = []
    if whole_table:
        monkeypatch.setattr(optimizer_ops, "_TABLE_SLICE", slice_elems)    # many slices, a ragged last one
        real = optimizer_ops._adam_rows_and_decay
        monkeypatch.setattr(optimizer_ops, "_adam_rows_and_decay", lambda *a: calls.append(1) or real(*a))
    else:
        monkeypatch.setattr(optimizer_ops, "_whole_table_ok", lambda *a: False)   # the densified update
    rng = np.random.RandomState(5)
    table = rng.uniform(-1, 1, (H, D)).astype(dtype)
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
        w = fluid.layers.data(name="w", shape=[D], dtype=dtype)
        emb = fluid.layers.embedding(ids, size=[H, D], is_sparse=True, dtype=dtype, param_attr=fluid.ParamAttr(
            name="table", initializer=fluid.initializer.NumpyArrayInitializer(table)))
        pooled = fluid.layers.sequence_pool(emb, "sum")
        loss = fluid.layers.reduce_sum(fluid.layers.elementwise_mul(pooled, w))
        fluid.optimizer.Adam(0.01).minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start, scope=scope)
    for _ in range(STEPS):
        lengths = list(rng.randint(1, 10, SEQS))
        n = sum(lengths)
        ids_np = rng.randint(0, 40 if rng.rand() < 0.5 else H, (n, 1)).astype(np.int64)   # repeats too
        ids_np[::2] = 3             # one row summed from many values of mixed sizes: the order of that sum shows
        feed = {"ids": fluid.create_lod_tensor(ids_np, [lengths], fluid.CPUPlace()),
                "w": (rng.uniform(-1, 1, (SEQS, D)) * 10.0 ** rng.randint(-4, 4, (SEQS, 1))).astype(dtype)}
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    assert len(calls) == (STEPS if whole_table else 0)
    names = ["table", "table_moment1_0", "table_moment2_0"]
    return {n: np.array(scope.find_var(n).get_tensor()) for n in names}


@pytest.mark.parametrize("slice_elems", [64, 1 << 20])
def test_whole_table_pass_is_the_densified_update_bit_for_bit(monkeypatch, slice_elems):
    with monkeypatch.context() as m:
        want = _train(m, whole_table=False)
    with monkeypatch.context() as m:
        got = _train(m, whole_table=True, slice_elems=slice_elems)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    # the run exercised what it claims: rows never looked up since their last step kept moving
    assert np.count_nonzero(want["table_moment1_0"]) > 100


def test_whole_table_pass_float64(monkeypatch):
    with monkeypatch.context() as m:
        want = _train(m, whole_table=False, dtype="float64")
    with monkeypatch.context() as m:
        got = _train(m, whole_table=True, dtype="float64")
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
