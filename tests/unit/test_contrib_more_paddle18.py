"""More fluid.contrib layers (fused_embedding_seq_pool, tdm_child, match_matrix_tensor, sequence_topk_avg_pooling,
ctr_metric_bundle, BasicGRUUnit/BasicLSTMUnit, basic_gru/basic_lstm) against Paddle 1.8.5's recorded forward
and gradient numbers (make_contrib_more.py)."""

import numpy as np
import pytest

import paddle_compat as fluid

from paddle18_parity import load_family

CASES, H, PATH = load_family("contrib_more")
DATA = np.load(PATH)


@pytest.mark.parity
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_matches_paddle18(case):
    H.check(fluid, case, DATA)
