"""CPU_NUM=2 with embedding(is_sparse=True): the per-place row-sparse gradients are summed (kept row-sparse)
and the numbers equal Paddle 1.8.5's (tests/data/paddle18/make_sparse_data_parallel.py)."""

import json
import os
import sys

import numpy as np

import paddle_compat as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data", "paddle18")
sys.path.insert(0, DATA)
from make_sparse_data_parallel import build_and_train  # noqa: E402


def test_two_places_sparse_embedding_matches_paddle(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "2")
    with open(os.path.join(DATA, "sparse_data_parallel.json")) as f:
        ref = json.load(f)
    got = build_and_train(fluid)
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(got["emb"], ref["emb"], rtol=1e-4, atol=1e-7)
    # rows never looked up stay as initialised (the update stayed row-sparse)
    np.testing.assert_array_equal(np.array(got["emb"])[4:], (np.arange(40).reshape(10, 4) / 40.0)[4:]
                                  .astype("float32"))
