"""dynamic_decode with BasicDecoder (TrainingHelper, GreedyEmbeddingHelper) and BeamSearchDecoder against
numbers recorded from Paddle 1.8.5 (tests/data/paddle18/make_decoding.py, whose builders make the same
programs here): outputs, ids, lengths and, for the training decoder, the gradients of the inputs, the
initial state and every parameter."""

import os

import numpy as np
import pytest

import paddle_compat as fluid
from paddle18_parity import check_recorded_case, load_recorded

L = fluid.layers
DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
MK, REF = load_recorded("decoding")


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_matches_paddle18(name):
    check_recorded_case(fluid, MK, REF, name)


def test_sample_embedding_helper_runs_and_stops_at_max_steps():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        start = L.data("start", shape=[-1], dtype="int64", append_batch_size=False)
        h0 = L.data("h0", shape=[4], dtype="float32")
        helper = L.SampleEmbeddingHelper(lambda ids: fluid.embedding(ids, size=[6, 3]), start, end_token=0,
                                         softmax_temperature=2.0, seed=3)
        dec = L.BasicDecoder(L.GRUCell(4), helper, output_fn=lambda x: L.fc(x, size=6))
        outs, _, lens = L.dynamic_decode(dec, inits=h0, max_step_num=3, is_test=True, return_length=True)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    ids, n = exe.run(main, feed={"start": np.array([1, 2], "int64"), "h0": np.zeros([2, 4], "float32")},
                     fetch_list=[outs.sample_ids, lens])
    assert ids.shape[0] == 2 and 1 <= ids.shape[1] <= 4 and ((ids >= 0) & (ids < 6)).all()
    assert (n <= ids.shape[1]).all()


def test_dynamic_decode_rejects_a_non_decoder():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        with pytest.raises(TypeError, match="must be a Decoder"):
            L.dynamic_decode(object())
