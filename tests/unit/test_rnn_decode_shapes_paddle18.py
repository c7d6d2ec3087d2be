"""Decoding programs whose shapes are partly unknown when built (Paddle's test_rnn_decode_api) against
Paddle 1.8.5 (tests/data/paddle18/make_rnn_decode_shapes.py builds the same programs): beam search over an
encoder output tiled with tile_beam_merge_with_batch ([-1, -1, H]), and cross_entropy of [N, T, V]
probabilities with an [N, T] label (an [N, T] loss, as Paddle's) times an [N, T] mask: the build-time
shapes, outputs and parameter gradients."""

import numpy as np
import pytest

import paddle_compat as fluid
from paddle18_parity import check_recorded_case, load_recorded

MK, REF = load_recorded("rnn_decode_shapes")


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_matches_paddle18(name):
    check_recorded_case(fluid, MK, REF, name)


def test_cross_entropy_label_rank():
    """Y takes the label's dims with the last set to 1: [N, T] for an [N, T] label, [N, T, 1] for [N, T, 1]."""
    L = fluid.layers
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        p = fluid.data("p", shape=[None, None, 5], dtype="float32")
        a = L.cross_entropy(p, fluid.data("a", shape=[None, None], dtype="int64"))
        b = L.cross_entropy(p, fluid.data("b", shape=[None, None, 1], dtype="int64"))
        exe = fluid.Executor(fluid.CPUPlace())
        probs = np.full((2, 3, 5), 0.2, "float32")
        lab = np.zeros((2, 3), "int64")
        ya, yb = exe.run(feed={"p": probs, "a": lab, "b": lab[..., None]}, fetch_list=[a, b])
    assert tuple(a.shape) == (-1, -1) and tuple(b.shape) == (-1, -1, 1)
    assert ya.shape == (2, 3) and yb.shape == (2, 3, 1)
    np.testing.assert_allclose(ya, -np.log(0.2), rtol=1e-6)
