"""chunk_eval with fluid.metrics.ChunkEvaluator over batches, a hand-checked IOB example, and the errors of
chunk_eval / warpctc / ctc_greedy_decoder."""

import numpy as np
import pytest

import paddle_compat as fluid


def _chunk_prog(scheme="IOB", types=2, excluded=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        inf = fluid.layers.data("inf", shape=[1], dtype="int64", lod_level=1)
        lab = fluid.layers.data("lab", shape=[1], dtype="int64", lod_level=1)
        outs = fluid.layers.chunk_eval(inf, lab, chunk_scheme=scheme, num_chunk_types=types,
                                       excluded_chunk_types=excluded)
    return main, outs


def _lod(a, lens):
    return fluid.create_lod_tensor(np.array(a, "int64").reshape(-1, 1), [lens], fluid.CPUPlace())


def test_iob_by_hand_and_chunk_evaluator():
    # IOB with 2 types: B-0=0 I-0=1 B-1=2 I-1=3 O=4
    lab = [0, 1, 4, 2, 3, 3, 4, 0]          # chunks: (0-1, t0) (3-5, t1) (7-7, t0)
    inf = [0, 1, 4, 2, 3, 4, 4, 0]          # chunks: (0-1, t0) (3-4, t1) (7-7, t0): 2 correct
    main, outs = _chunk_prog()
    exe = fluid.Executor(fluid.CPUPlace())
    ev = fluid.metrics.ChunkEvaluator()
    for _ in range(2):
        p, r, f1, ni, nl, nc = exe.run(main, feed={"inf": _lod(inf, [8]), "lab": _lod(lab, [8])}, fetch_list=outs)
        assert (int(ni[0]), int(nl[0]), int(nc[0])) == (3, 3, 2)
        np.testing.assert_allclose([p[0], r[0], f1[0]], [2 / 3.0] * 3, rtol=1e-6)
        ev.update(ni, nl, nc)
    np.testing.assert_allclose(ev.eval(), [2 / 3.0] * 3, rtol=1e-6)


def test_chunk_split_across_sequences_is_two_chunks():
    main, outs = _chunk_prog()
    exe = fluid.Executor(fluid.CPUPlace())
    res = exe.run(main, feed={"inf": _lod([0, 1, 1, 1], [2, 2]), "lab": _lod([0, 1, 1, 1], [2, 2])},
                  fetch_list=outs)
    assert int(res[3][0]) == 2 and int(res[5][0]) == 2


def test_errors_name_the_fault():
    with pytest.raises(ValueError, match="chunk_scheme"):
        _chunk_prog(scheme="BIO")
    main, outs = _chunk_prog()
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises(Exception, match="outside"):
        exe.run(main, feed={"inf": _lod([0, 9], [2]), "lab": _lod([0, 1], [2])}, fetch_list=outs)
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.data("x", shape=[4], dtype="float32", lod_level=1)
        y = fluid.layers.data("y", shape=[1], dtype="int32", lod_level=1)
        xl = fluid.layers.data("xl", shape=[1], dtype="int64")
        with pytest.raises(ValueError, match="both input_length and label_length"):
            fluid.layers.warpctc(x, y, input_length=xl)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[4], dtype="float32", lod_level=1)
        y = fluid.layers.data("y", shape=[1], dtype="int32", lod_level=1)
        loss = fluid.layers.warpctc(x, y, blank=4)
    with pytest.raises(Exception, match="blank=4 is outside the 4 classes"):
        exe.run(main, feed={"x": fluid.create_lod_tensor(np.zeros((3, 4), "float32"), [[3]], fluid.CPUPlace()),
                            "y": fluid.create_lod_tensor(np.ones((1, 1), "int32"), [[1]], fluid.CPUPlace())},
                fetch_list=[loss])
