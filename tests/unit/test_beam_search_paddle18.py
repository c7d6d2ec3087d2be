"""beam_search, beam_search_decode, lod_reset / lod_append and the machine_translation book decode against
numbers recorded from Paddle 1.8.5 (tests/data/paddle18/make_beam_search.py, whose case functions run here
on paddle_compat): selected ids, scores, parent indices and LoDs; decoded sentences; lod_reset's LoD and
gradient."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "beam_search.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_beam_search", os.path.join(DATA, "make_beam_search.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


def _same(got, want, what):
    assert got["lod"] == want["lod"], "%s: LoD %s, Paddle %s" % (what, got["lod"], want["lod"])
    assert got["score_lod"] == want["score_lod"], what
    assert got["ids"] == want["ids"], "%s: ids %s, Paddle %s" % (what, got["ids"], want["ids"])
    np.testing.assert_allclose(got["scores"], want["scores"], rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(MK.BEAM_CASES)))
def test_beam_search_matches_paddle18(i):
    got, want = MK.beam_step(fluid, MK.BEAM_CASES[i]), REF["beam"][i]
    _same(got, want, "beam_search case %d" % i)
    assert got["parent_idx"] == want["parent_idx"]
    np.testing.assert_array_equal(got["followed"], want["followed"])


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(MK.DECODE_CASES)))
def test_beam_search_decode_matches_paddle18(i):
    _same(MK.decode_arrays(fluid, MK.DECODE_CASES[i]), REF["decode"][i], "beam_search_decode case %d" % i)


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(MK.LOD_CASES)))
def test_lod_reset_matches_paddle18(i):
    c, want = MK.LOD_CASES[i], REF["lod"][i]
    got = MK.lod_case(fluid, c)
    assert got["out_lod"] == want["out_lod"], c
    assert got["pooled_lod"] == want["pooled_lod"], c
    np.testing.assert_allclose(got["pooled"], want["pooled"], rtol=1e-5, atol=1e-6, err_msg=str(c))
    np.testing.assert_allclose(got["grad"], want["grad"], rtol=1e-4, atol=1e-6, err_msg=str(c))


@pytest.mark.parity
@pytest.mark.parametrize("i", range(len(MK.MT_CASES)))
def test_machine_translation_decode_matches_paddle18(i):
    c, want = MK.MT_CASES[i], REF["mt"][i]
    params = [np.array(v, "float32") for v in want["params"]]
    got = MK.mt_case(fluid, c, params)
    _same(got, want, "machine_translation decode %s" % c)
    # the fetched sentence ids and scores are 1-D ([n_words]), not [n_words, 1]
    assert got["shapes"] == want["shapes"], c


def _run(build, feed):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        outs = build()
    with fluid.scope_guard(fluid.Scope()):
        return fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=list(outs), return_numpy=False)


def _beam_inputs(scores_lod_level=2):
    pre_ids = fluid.layers.data("pre_ids", shape=[1], dtype="int64", lod_level=2)
    pre_scores = fluid.layers.data("pre_scores", shape=[1], dtype="float32", lod_level=2)
    scores = fluid.layers.data("cand_scores", shape=[3], dtype="float32", lod_level=scores_lod_level)
    return fluid.layers.beam_search(pre_ids, pre_scores, None, scores, 2, end_id=0)


def test_beam_search_without_lod_names_scores():
    lt = lambda a, lod: fluid.create_lod_tensor(np.asarray(a), lod, fluid.CPUPlace())
    feed = {"pre_ids": lt(np.ones((2, 1), "int64"), [[1, 1], [1, 1]]),
            "pre_scores": lt(np.zeros((2, 1), "float32"), [[1, 1], [1, 1]]),
            "cand_scores": np.zeros((2, 3), "float32")}
    with pytest.raises(Exception, match="scores=cand_scores needs a LoD"):
        _run(lambda: _beam_inputs(0), feed)


def test_beam_search_prefix_count_mismatch_names_both():
    lt = lambda a, lod: fluid.create_lod_tensor(np.asarray(a), lod, fluid.CPUPlace())
    feed = {"pre_ids": lt(np.ones((3, 1), "int64"), [[1, 2], [1, 1, 1]]),
            "pre_scores": lt(np.zeros((3, 1), "float32"), [[1, 2], [1, 1, 1]]),
            "cand_scores": lt(np.zeros((2, 3), "float32"), [[1, 1], [1, 1]])}
    with pytest.raises(Exception, match="pre_ids=pre_ids has 3 elements but scores=cand_scores has 2 rows"):
        _run(_beam_inputs, feed)


def test_beam_search_decode_names_mismatched_step_lods():
    def build():
        ia, sa = fluid.layers.create_array("int64"), fluid.layers.create_array("float32")
        i = fluid.layers.fill_constant([1], "int64", 0)
        fluid.layers.array_write(fluid.layers.data("i0", shape=[1], dtype="int64", lod_level=2), i, ia)
        fluid.layers.array_write(fluid.layers.data("s0", shape=[1], dtype="float32", lod_level=2), i, sa)
        return fluid.layers.beam_search_decode(ia, sa, 2, 1)
    lt = lambda a, lod: fluid.create_lod_tensor(np.asarray(a), lod, fluid.CPUPlace())
    feed = {"i0": lt(np.zeros((2, 1), "int64"), [[1, 1], [1, 1]]),
            "s0": lt(np.zeros((2, 1), "float32"), [[2], [1, 1]])}
    with pytest.raises(Exception, match=r"step 0: Ids=.* has LoD \[\[0, 1, 2\], \[0, 1, 2\]\] but Scores=.* has "
                                        r"\[\[0, 2\], \[0, 1, 2\]\]"):
        _run(build, feed)


def test_lod_reset_target_must_cover_x():
    def build():
        x = fluid.layers.data("xl", shape=[2], dtype="float32")
        return [fluid.layers.lod_reset(x, target_lod=[0, 2, 5])]
    with pytest.raises(Exception, match=r"target_lod \[0, 2, 5\] must be ascending offsets from 0 to the 4 rows "
                                        r"of X=xl"):
        _run(build, {"xl": np.ones((4, 2), "float32")})


@pytest.mark.parity
def test_while_body_reads_and_writes_lod_like_paddle18():
    got, want = MK.while_lod(fluid), REF["while_lod"]
    assert got["regrouped_lod"] == want["regrouped_lod"]
    np.testing.assert_allclose(got["acc"], want["acc"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["pooled"], want["pooled"], rtol=1e-5, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("flag", [True, False])
def test_cond_branches_read_and_return_lod_like_paddle18(flag):
    got, want = MK.cond_lod(fluid, flag), REF["cond_lod"][0 if flag else 1]
    assert got["lod"] == want["lod"]
    np.testing.assert_allclose(got["pooled"], want["pooled"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["grad"], want["grad"], rtol=1e-4, atol=1e-6)


def test_fetching_an_array_gives_its_elements_with_their_lod():
    # Paddle 1.8.5: a list of LoDTensors (return_numpy=False) or of ndarrays (an element with a LoD refused)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[1], dtype="int64", lod_level=1)
        y = fluid.layers.data("y", shape=[1], dtype="int64")
        i = fluid.layers.fill_constant([1], "int64", 0)
        a, b = fluid.layers.array_write(x, i), fluid.layers.array_write(y, i)
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"x": fluid.create_lod_tensor(np.arange(3).reshape(3, 1).astype("int64"), [[1, 2]], fluid.CPUPlace()),
            "y": np.ones((2, 1), "int64")}
    ra, rb = exe.run(main, feed=feed, fetch_list=[a, b], return_numpy=False)
    assert isinstance(ra, list) and len(ra) == 1 and ra[0].lod() == [[0, 1, 3]]
    np.testing.assert_array_equal(np.array(ra[0]).ravel(), [0, 1, 2])
    (nb,) = exe.run(main, feed=feed, fetch_list=[b])
    assert isinstance(nb, list) and nb[0].shape == (2, 1)
    with pytest.raises(RuntimeError, match="hold LoD information"):
        exe.run(main, feed=feed, fetch_list=[a])
