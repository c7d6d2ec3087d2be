"""search_pyramid_hash (pyramid_hash op) against numbers recorded from PaddlePaddle 1.8.5
(tests/data/paddle18/make_pyramid_hash.py): Out and its LoD (XXH32 slots and rand_r dropout exact), the DropPos
flags and LoD, and the gradient that reaches W (Paddle moves W by -lr * that gradient inside its grad op)."""

import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "pyramid_hash.npz")
REC = np.load(DATA)
CASES = sorted({k.split("/")[0] for k in REC.files if not k.startswith("filter_")})
FILTER_CASES = sorted({k.split("/")[0] for k in REC.files if k.startswith("filter_")})


def _run(case):
    g = lambda k: REC[case + "/" + k]  # noqa: E731
    emb, space, layers, rand, drop, training, seed, lr = g("attrs").tolist()
    lens = g("lens").tolist()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[-1, g("ids").shape[1]], dtype="int32", lod_level=1)
        out = fluid.contrib.layers.search_pyramid_hash(
            input=x, num_emb=int(emb), space_len=int(space), pyramid_layer=int(layers), rand_len=int(rand),
            drop_out_percent=drop, is_training=bool(training), use_filter=False, white_list_len=1,
            black_list_len=0, seed=int(seed), lr=lr, param_attr=fluid.ParamAttr(name="W"))
        w = main.global_block().var("W")
        w.stop_gradient = False
        loss = fluid.layers.reduce_sum(out * out)
        gw, = fluid.gradients([loss], [w])
    op = [o for o in main.global_block().ops if o.type == "pyramid_hash"][0]
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        scope.find_var("W").get_tensor().set(g("w0"), fluid.CPUPlace())
        feed = {"x": fluid.create_lod_tensor(g("ids"), [lens], fluid.CPUPlace())}
        o, dp, gwv = exe.run(main, feed=feed, fetch_list=[out, op.output("DropPos")[0], gw], return_numpy=False)
    return g, lr, o, dp, np.array(gwv)


@pytest.mark.parametrize("case", CASES)
def test_forward_matches_paddle(case):
    g, _, o, dp, _ = _run(case)
    assert o.lod()[0] == g("out_lod").tolist()
    np.testing.assert_array_equal(np.array(o), g("out"))
    assert dp.lod()[0] == g("drop_pos_lod").tolist()
    n_terms = sum(max(0, L - n + 1) for L in g("lens").tolist() for n in range(2, int(g("attrs")[2]) + 1))
    assert np.array(dp).shape == g("drop_pos").shape
    np.testing.assert_array_equal(np.array(dp)[:n_terms], g("drop_pos")[:n_terms])


@pytest.mark.parametrize("case", CASES)
def test_w_gradient_matches_paddle_update(case):
    g, lr, _, _, gw = _run(case)
    drop, training = g("attrs")[4], g("attrs")[5]
    if not training:
        # Outside training Out is scaled by drop_out_percent; Paddle's grad kernel leaves that factor out of its
        # update, ours is the derivative of Out.
        gw = gw / drop
    np.testing.assert_allclose(g("w0") - lr * gw, g("w1"), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", FILTER_CASES)
def test_bloom_filter_lists_match_paddle(case):
    """White/black lists written by bloom_filter.build and read by Paddle's own MurmurHash3: the same terms
    survive (and, in training, draw the same rand_r values)."""
    g = lambda k: REC[case + "/" + k]  # noqa: E731
    emb, space, layers, rand, drop, training, seed, lr = g("attrs").tolist()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[-1, 1], dtype="int32", lod_level=1)
        out = fluid.contrib.layers.search_pyramid_hash(
            input=x, num_emb=int(emb), space_len=int(space), pyramid_layer=int(layers), rand_len=int(rand),
            drop_out_percent=drop, is_training=bool(training), use_filter=True,
            white_list_len=g("white").shape[0], black_list_len=g("black").shape[0], seed=int(seed), lr=lr,
            param_attr=fluid.ParamAttr(name="W"), param_attr_wl=fluid.ParamAttr(name="WL"),
            param_attr_bl=fluid.ParamAttr(name="BL"))
    op = [o for o in main.global_block().ops if o.type == "pyramid_hash"][0]
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        for n, k in (("W", "w0"), ("WL", "white"), ("BL", "black")):
            scope.find_var(n).get_tensor().set(g(k), fluid.CPUPlace())
        feed = {"x": fluid.create_lod_tensor(g("ids"), [g("lens").tolist()], fluid.CPUPlace())}
        o, dp = exe.run(main, feed=feed, fetch_list=[out, op.output("DropPos")[0]], return_numpy=False)
    assert o.lod()[0] == g("out_lod").tolist() and dp.lod()[0] == g("drop_pos_lod").tolist()
    np.testing.assert_array_equal(np.array(o), g("out"))
    n_terms = sum(max(0, L - n + 1) for L in g("lens").tolist() for n in range(2, int(layers) + 1))
    assert np.array(dp).shape == g("drop_pos").shape
    np.testing.assert_array_equal(np.array(dp)[:n_terms], g("drop_pos")[:n_terms])     # Paddle leaves the rest


def test_a_list_that_is_no_filter_is_named():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[-1, 1], dtype="int32", lod_level=1)
        out = fluid.contrib.layers.search_pyramid_hash(
            input=x, num_emb=8, space_len=50, pyramid_layer=3, rand_len=4, drop_out_percent=0.1, is_training=True,
            use_filter=True, white_list_len=40, black_list_len=0, seed=1, lr=0.1,
            param_attr_wl=fluid.ParamAttr(name="not_a_filter"))
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        ids = np.array([[1], [2], [3]], "int32")
        with pytest.raises(Exception, match="not_a_filter holds no bloom filter"):
            exe.run(main, feed={"x": fluid.create_lod_tensor(ids, [[3]], fluid.CPUPlace())}, fetch_list=[out])


def test_distribute_update_vars_must_be_own_parameters():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data(name="x", shape=[-1, 1], dtype="int32", lod_level=1)
        with pytest.raises(ValueError, match="Nope"):
            fluid.contrib.layers.search_pyramid_hash(
                input=x, num_emb=8, space_len=50, pyramid_layer=3, rand_len=4, drop_out_percent=0.1,
                is_training=True, use_filter=False, white_list_len=0, black_list_len=0, seed=1, lr=0.1,
                param_attr=fluid.ParamAttr(name="emb"), distribute_update_vars=["Nope"])
