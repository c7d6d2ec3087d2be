"""Nested DynamicRNNs (a 2-level LoD step input) and a DynamicRNN static_input with a LoD, against numbers
recorded from Paddle 1.8.5 (tests/data/paddle18/make_rnn_nested.py, whose builders make the same programs
here): outputs, gradients w.r.t. the fed inputs and every parameter, and the forward program structure."""

import os

import numpy as np
import pytest

import paddle_compat as fluid
from paddle18_parity import check_recorded_case, load_recorded

L = fluid.layers
DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
MK, REF = load_recorded("rnn_nested")


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_matches_paddle18(name):
    check_recorded_case(fluid, MK, REF, name)


@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_forward_ops_are_paddles(name):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        MK.CASES[name](fluid)
    blocks = dict(part.split(":", 1) for part in str(REF[name + "|ops"]).split(";"))
    ops0 = blocks["0"].split(",")
    assert [op.type for op in main.global_block().ops] == ops0[:ops0.index("square")]
    for b in main.blocks[1:]:
        assert [op.type for op in b.ops] == blocks[str(b.idx)].split(",")


def test_nested_output_has_two_levels():
    """Each outer step's inner-RNN output is a 1-level LoD tensor; the outer output rebuilds both levels."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = L.data("x", shape=[2], dtype="float32", lod_level=2)
        outer = L.DynamicRNN()
        with outer.block():
            sub = outer.step_input(x)
            assert sub.lod_level == 1
            inner = L.DynamicRNN()
            with inner.block():
                xt = inner.step_input(sub)
                assert xt.lod_level == 0
                inner.output(L.scale(xt, 2.0))
            outer.output(inner())
        out = outer()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    data = np.arange(18, dtype="float32").reshape(9, 2)
    lod = [[1, 3, 2], [2, 1, 3, 1, 1, 1]]
    res, = exe.run(main, feed={"x": fluid.create_lod_tensor(data, lod, fluid.CPUPlace())}, fetch_list=[out],
                   return_numpy=False)
    np.testing.assert_allclose(np.array(res), 2 * data)
    assert res.recursive_sequence_lengths() == lod
