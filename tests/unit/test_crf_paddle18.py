"""linear_chain_crf (cost, gradients w.r.t. emission and transition) and crf_decoding (Viterbi path, and the
0/1 agreement with a label) against numbers recorded from Paddle 1.8.5 (tests/data/paddle18/make_crf.py)."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "crf.json")) as _fh:
    REF = json.load(_fh)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(REF["cases"])))
def test_crf_matches_paddle18(i):
    c = REF["cases"][i]
    em, lab = np.array(c["emission"], "float32"), np.array(c["label"], "int64")
    tags = em.shape[1]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[tags], dtype="float32", lod_level=1)
        x.stop_gradient = False
        y = fluid.layers.data("y", shape=[1], dtype="int64", lod_level=1)
        cost = fluid.layers.linear_chain_crf(x, y, param_attr=fluid.ParamAttr(name="crfw"))
        path = fluid.layers.crf_decoding(x, param_attr=fluid.ParamAttr(name="crfw"))
        right = fluid.layers.crf_decoding(x, param_attr=fluid.ParamAttr(name="crfw"), label=y)
        loss = fluid.layers.reduce_sum(cost * cost * 0.1 + cost)
        gx, gw = fluid.gradients([loss], [x, main.global_block().var("crfw")])
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        scope.find_var("crfw").get_tensor().set(np.array(c["transition"], "float32"), fluid.CPUPlace())
        feed = {"x": fluid.create_lod_tensor(em, [c["lens"]], fluid.CPUPlace()),
                "y": fluid.create_lod_tensor(lab, [c["lens"]], fluid.CPUPlace())}
        res = [np.array(v) for v in exe.run(main, feed=feed, fetch_list=[cost, path, right, gx, gw],
                                             return_numpy=False)]
    np.testing.assert_allclose(res[0], c["cost"], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(res[1], c["path"])
    np.testing.assert_array_equal(res[2], c["right"])
    np.testing.assert_allclose(res[3], c["grad_emission"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(res[4], c["grad_transition"], rtol=1e-4, atol=1e-5)


def test_crf_decoding_needs_a_named_transition():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float32", lod_level=1)
        with pytest.raises(ValueError, match="must name the Transition"):
            fluid.layers.crf_decoding(x, param_attr=None)


with open(os.path.join(DATA, "crf_padded.json")) as _fh:
    REF_PADDED = json.load(_fh)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(REF_PADDED["cases"])))
def test_padded_crf_matches_paddle18(i):
    """The padded form (Emission [N, L, D], Label [N, L], Length [N]; make_crf_padded.py), chunk_eval too."""
    c = REF_PADDED["cases"][i]
    em, lab = np.array(c["emission"], "float32"), np.array(c["label"], "int64")
    n, width, tags = em.shape
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", shape=[n, width, tags], dtype="float32")
        x.stop_gradient = False
        y = fluid.data("y", shape=[n, width], dtype="int64")
        ln = fluid.data("len", shape=[n], dtype="int64")
        cost = fluid.layers.linear_chain_crf(x, y, param_attr=fluid.ParamAttr(name="crfw"), length=ln)
        path = fluid.layers.crf_decoding(x, param_attr=fluid.ParamAttr(name="crfw"), length=ln)
        right = fluid.layers.crf_decoding(x, param_attr=fluid.ParamAttr(name="crfw"), label=y, length=ln)
        chunks = fluid.layers.chunk_eval(path, y, chunk_scheme="IOB", num_chunk_types=(tags - 1) // 2,
                                         seq_length=ln)
        loss = fluid.layers.reduce_sum(cost * cost * 0.1 + cost)
        gx, gw = fluid.gradients([loss], [x, main.global_block().var("crfw")])
    assert path.shape == (n, width) and cost.shape == (n, 1)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        scope.find_var("crfw").get_tensor().set(np.array(c["transition"], "float32"), fluid.CPUPlace())
        res = exe.run(main, feed={"x": em, "y": lab, "len": np.array(c["lens"], "int64")},
                      fetch_list=[cost, path, right, gx, gw] + list(chunks[3:]))
    np.testing.assert_allclose(res[0], c["cost"], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(res[1], c["path"])
    np.testing.assert_array_equal(res[2], c["right"])
    np.testing.assert_allclose(res[3], c["grad_emission"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(res[4], c["grad_transition"], rtol=1e-4, atol=1e-5)
    assert [int(np.array(v).ravel()[0]) for v in res[5:]] == c["chunk_counts"]
