"""Book chapters rnn_encoder_decoder and machine_translation (training part), tests/book_seq2seq.py: DynamicRNN
decoders (an LSTM step built from fc layers; an fc step over a shared embedding, sparse and dense), trained
with Adagrad. The first 10 losses equal Paddle 1.8.5's from the same initial weights and data (recorded by
tests/data/paddle18/make_book_seq2seq.py)."""

import json
import os

import numpy as np
import pytest

import book_seq2seq as B
import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "book_seq2seq.json")) as _fh:
    REF = json.load(_fh)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(B.MODELS))
def test_first_10_losses_match_paddle18(name):
    assert REF["batches"] == B.batches(10)
    got = B.train(fluid, name, REF["batches"])
    # same parameters, names and shapes, in the same creation order
    assert got["params"] == REF[name]["params"]
    np.testing.assert_allclose(got["losses"], REF[name]["losses"], rtol=1e-4, err_msg=name)
