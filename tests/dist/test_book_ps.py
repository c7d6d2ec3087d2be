"""Book models as 2 pservers + 2 trainers on 127.0.0.1 (understand_sentiment convolution and stacked LSTM nets,
label_semantic_roles, word2vec, recommender_system; word2vec's hsigmoid and nce heads on 1 pserver): each trainer's first 10 losses equal one process training on both trainers' batches with
averaged gradients (whose own single-trainer losses tests/unit/test_book_*.py check against Paddle 1.8.5)."""

import os

import numpy as np
import pytest

import book_more
import book_sentiment as B
import book_srl
import paddle_compat as fluid
from ps_cluster import run_ok

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]
SCRIPT = os.path.join("tests", "dist", "scripts", "book_node.py")


@pytest.mark.parametrize("model", ["conv", "stacked_lstm"])
def test_book_sentiment_two_pservers_two_trainers(tmp_path, model):
    got = run_ok(tmp_path, [{"model": model, "steps": 10}], script=SCRIPT)
    want = B.local_two_trainer_losses(model, 10)
    for t in range(2):
        np.testing.assert_allclose(got[(0, t)], want[t], rtol=1e-4, err_msg="%s trainer %d" % (model, t))


def test_book_label_semantic_roles_two_pservers_two_trainers(tmp_path):
    """db_lstm + CRF: sparse and frozen embeddings, a per-parameter learning rate, a decayed learning rate."""
    got = run_ok(tmp_path, [{"model": "srl", "steps": 10}], script=SCRIPT)
    want = book_srl.local_two_trainer_losses(fluid, 10)
    for t in range(2):
        np.testing.assert_allclose(got[(0, t)], want[t], rtol=1e-4, err_msg="srl trainer %d" % t)


@pytest.mark.parametrize("model", ["word2vec", "word2vec_sparse", "recommender", "digits_conv"])
def test_book_word2vec_recommender_two_pservers_two_trainers(tmp_path, model):
    """word2vec: one embedding table shared by 4 lookups (dense, and sparse rows); recommender_system: 7 sparse
    tables, sequence_conv_pool, cos_sim; recognize_digits' conv net: filter gradients computed from
    channels-last activations travel as ordinary tensors."""
    got = run_ok(tmp_path, [{"model": model, "steps": 10}], script=SCRIPT)
    want = book_more.local_two_trainer_losses(fluid, model, 10)
    for t in range(2):
        np.testing.assert_allclose(got[(0, t)], want[t], rtol=1e-4, err_msg="%s trainer %d" % (model, t))


@pytest.mark.parametrize("model", ["word2vec_hs", "word2vec_nce"])
def test_sparse_hsigmoid_nce_one_pserver_two_trainers(tmp_path, model):
    """hsigmoid / nce with is_sparse=True: their weight gradients travel as rows (SelectedRows), like a sparse
    embedding's."""
    got = run_ok(tmp_path, [{"model": model, "steps": 10}], script=SCRIPT, pservers=1)
    want = book_more.local_two_trainer_losses(fluid, model, 10)
    for t in range(2):
        np.testing.assert_allclose(got[(0, t)], want[t], rtol=1e-4, err_msg="%s trainer %d" % (model, t))
