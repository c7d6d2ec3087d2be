"""nce / hsigmoid / sampled softmax beyond the recorded numbers: the samplers' distributions (Paddle's
draws come from C++ std::mt19937 streams, so only the distribution can be compared), seed behaviour,
is_sparse gradient types, and errors."""

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.fluid.layers.loss import _alias_table


def _nce_labels(sampler, classes=8, neg=4000, seed=3, dist=None, runs=1):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[2], dtype="float32")
        y = fluid.layers.data("y", shape=[1], dtype="int64")
        fluid.layers.nce(x, y, classes, num_neg_samples=neg, sampler=sampler, custom_dist=dist, seed=seed)
    op = [o for o in main.global_block().ops if o.type == "nce"][0]
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    feed = {"x": np.ones((2, 2), "float32"), "y": np.array([[1], [2]], "int64")}
    return [exe.run(main, feed=feed, fetch_list=[op.output("SampleLabels")[0]])[0] for _ in range(runs)]


def _freq(labels, classes):
    neg = labels[:, 1:].ravel()
    return np.bincount(neg, minlength=classes) / float(neg.size)


def test_uniform_sampler_distribution_and_fixed_seed():
    a, b = _nce_labels("uniform", runs=2)
    np.testing.assert_array_equal(a[:, 0], [1, 2])            # true labels first
    np.testing.assert_array_equal(a, b)                       # seed != 0: the same draws every run, as Paddle
    np.testing.assert_allclose(_freq(a, 8), np.full(8, 1 / 8.0), atol=0.02)


def test_seed_zero_draws_anew():
    a, b = _nce_labels("uniform", seed=0, runs=2)
    assert not np.array_equal(a, b)


def test_log_uniform_sampler_distribution():
    (a,) = _nce_labels("log_uniform", classes=10)
    # Paddle: v = int(exp(u * log(10))) - 1, then v % 9 (class 9 folds onto 0)
    u = np.random.RandomState(0).uniform(size=400000)
    expect = np.bincount((np.exp(u * np.log(10)).astype(np.int64) - 1) % 9, minlength=10) / 400000.0
    np.testing.assert_allclose(_freq(a, 10), expect, atol=0.02)


def test_custom_dist_sampler_distribution():
    dist = [0.05, 0.1, 0.2, 0.15, 0.3, 0.05, 0.1, 0.05]
    (a,) = _nce_labels("custom_dist", dist=dist)
    np.testing.assert_allclose(_freq(a, 8), dist, atol=0.02)


def test_alias_table_reproduces_the_distribution():
    dist = [0.05, 0.1, 0.2, 0.15, 0.3, 0.05, 0.1, 0.05]
    alias, keep = _alias_table(dist)
    n = len(dist)
    mass = np.zeros(n)
    for i in range(n):
        mass[i] += keep[i] / n
        if alias[i] >= 0:
            mass[alias[i]] += (1 - keep[i]) / n
    np.testing.assert_allclose(mass, dist, atol=1e-6)


def test_sparse_weight_gradients_are_selected_rows():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        y = fluid.layers.data("y", shape=[1], dtype="int64")
        t = fluid.layers.data("t", shape=[2], dtype="int64")
        c = fluid.layers.data("c", shape=[2], dtype="int64")
        a = fluid.layers.nce(x, y, 6, num_neg_samples=2, is_sparse=True, param_attr=fluid.ParamAttr(name="nw"),
                             bias_attr=fluid.ParamAttr(name="nb"))
        b = fluid.layers.hsigmoid(x, y, 4, path_table=t, path_code=c, is_custom=True, is_sparse=True,
                                  param_attr=fluid.ParamAttr(name="hw"), bias_attr=fluid.ParamAttr(name="hb"))
        loss = fluid.layers.mean(a + b)
        fluid.backward.append_backward(loss)
    blk = main.global_block()
    sr = fluid.core.VarDesc.VarType.SELECTED_ROWS
    assert blk.var("nw@GRAD").type == sr and blk.var("hw@GRAD").type == sr
    assert blk.var("nb@GRAD").type != sr and blk.var("hb@GRAD").type != sr     # bias grads stay dense
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    g, = exe.run(main, feed={"x": np.ones((2, 3), "float32"), "y": np.array([[0], [3]], "int64"),
                             "t": np.array([[0, 2], [1, -1]], "int64"), "c": np.array([[1, 0], [0, -1]], "int64")},
                 fetch_list=["hw@GRAD"], return_numpy=False)
    assert sorted(set(np.array(g.rows()).tolist())) == [0, 1, 2]     # only the on-path nodes


def test_sampled_softmax_random_samples_are_unique_and_shared():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[50], dtype="float32")
        y = fluid.layers.data("y", shape=[1], dtype="int64")
        loss = fluid.layers.sampled_softmax_with_cross_entropy(x, y, 10, seed=5)
    op = main.global_block().ops[0]
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    r = np.random.RandomState(0)
    out, smp, prob = exe.run(main, feed={"x": r.randn(3, 50).astype("float32"),
                                         "y": np.array([[3], [7], [40]], "int64")},
                             fetch_list=[loss, op.output("Samples")[0], op.output("Probabilities")[0]])
    assert out.shape == (3, 1) and np.isfinite(out).all()
    np.testing.assert_array_equal(smp[:, 0], [3, 7, 40])
    assert len(set(smp[0, 1:].tolist())) == 10 and (smp[1:, 1:] == smp[0, 1:]).all()
    assert ((prob > 0) & (prob <= 1)).all()


def test_errors_name_the_fault():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        y = fluid.layers.data("y", shape=[1], dtype="int64")
        with pytest.raises(ValueError, match="sampler must be one of"):
            fluid.layers.nce(x, y, 5, sampler="zipf")
        with pytest.raises(ValueError, match="custom_dist"):
            fluid.layers.nce(x, y, 5, sampler="custom_dist")
        with pytest.raises(ValueError, match="at least 2"):
            fluid.layers.hsigmoid(x, y, 1)
        with pytest.raises(ValueError, match="path_code must be given"):
            fluid.layers.hsigmoid(x, y, 4, path_table=y, is_custom=True)
        with pytest.raises(ValueError, match="num_true=1 only"):
            fluid.layers.sampled_softmax_with_cross_entropy(x, y, 2, num_true=2)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        y = fluid.layers.data("y", shape=[1], dtype="int64")
        out = fluid.layers.nce(x, y, 5, num_neg_samples=2)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    with pytest.raises(Exception, match="outside"):
        exe.run(main, feed={"x": np.ones((1, 3), "float32"), "y": np.array([[5]], "int64")}, fetch_list=[out])


@pytest.mark.parametrize("model", ["word2vec_hs", "word2vec_nce"])
def test_transpiled_sparse_weights_travel_as_rows(model):
    """The pserver program lists the is_sparse hsigmoid/nce weight among its row-sparse gradients, as it lists
    a sparse embedding table (tests/dist/test_book_ps.py trains them)."""
    import sys
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    import book_more
    main, startup, cost, params = book_more.build(fluid, model)
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=startup, pservers="127.0.0.1:6170", trainers=2)
    ps = t.get_pserver_program("127.0.0.1:6170")
    serv = [op for op in ps.global_block().ops if op.type == "listen_and_serv"][0]
    sparse = {s.split(":")[1] for s in serv.attrs["sparse_grad_to_param"]}
    weight = "hierarchical_sigmoid_0.w_0" if model == "word2vec_hs" else "nce_0.w_0"
    assert sparse == {"shared_w", weight}
