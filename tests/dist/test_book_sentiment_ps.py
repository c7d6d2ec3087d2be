"""understand_sentiment book models (convolution net, stacked LSTM net) as 2 pservers + 2 trainers on 127.0.0.1:
each trainer's first 10 losses equal one process training on both trainers' batches with averaged gradients
(whose own single-trainer losses tests/unit/test_book_understand_sentiment.py checks against Paddle 1.8.5)."""

import os

import numpy as np
import pytest

import book_sentiment as B
from ps_cluster import run_ok

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]
SCRIPT = os.path.join("tests", "dist", "scripts", "book_node.py")


@pytest.mark.parametrize("model", ["conv", "stacked_lstm"])
def test_book_sentiment_two_pservers_two_trainers(tmp_path, model):
    got = run_ok(tmp_path, [{"model": model, "steps": 10}], script=SCRIPT)
    want = B.local_two_trainer_losses(model, 10)
    for t in range(2):
        np.testing.assert_allclose(got[(0, t)], want[t], rtol=1e-4, err_msg="%s trainer %d" % (model, t))
