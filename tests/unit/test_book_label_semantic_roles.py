"""Book chapter label_semantic_roles (tests/book_srl.py: db_lstm with 4 stacked LSTMs, linear_chain_crf,
crf_decoding, a frozen shared embedding, a per-parameter learning rate, SGD with exponential decay): the first
10 losses and the last decoded path equal Paddle 1.8.5's from the same initial weights and data (recorded by
tests/data/paddle18/make_book_srl.py running the same module)."""

import json
import os

import numpy as np
import pytest

import book_srl
import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")


@pytest.mark.parity
def test_first_10_losses_match_paddle18():
    with open(os.path.join(DATA, "book_srl.json")) as fh:
        ref = json.load(fh)
    got = book_srl.train(fluid)
    assert got["params"] == ref["params"]
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=1e-4)
    np.testing.assert_array_equal(got["last_path"], ref["last_path"])
