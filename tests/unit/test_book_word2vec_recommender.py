"""Book chapters word2vec (N-gram: 4 embeddings sharing one table, concat, fc, softmax cross entropy; dense and
is_sparse; hsigmoid and nce heads) and recommender_system (user/movie features, embeddings, sequence_conv_pool
on the title, cos_sim, scale, square_error_cost) and recognize_digits' convolutional net (conv2d, pool2d: the
convolutions read channels-last memory on the CPU, FLAGS_conv_channels_last), tests/book_more.py: the first 10
SGD losses equal Paddle
1.8.5's from the same initial weights and data (tests/data/paddle18/make_book_more.py)."""

import json
import os

import numpy as np
import pytest

import book_more
import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "book_more.json")) as _fh:
    REF = json.load(_fh)


@pytest.mark.parity
@pytest.mark.parametrize("name", book_more.MODELS)
def test_first_10_losses_match_paddle18(name):
    got = book_more.train(fluid, name)
    assert got["params"] == REF[name]["params"]
    np.testing.assert_allclose(got["losses"], REF[name]["losses"], rtol=1e-4, err_msg=name)
