"""data_norm, spectral_norm, the RoI poolings, deformable conv, hash, similarity_focus, filter_by_instag and
tensor_array_to_tensor against Paddle 1.8.5's recorded forward and gradient numbers (make_layers_more.py)."""

import numpy as np
import pytest

import paddle_compat as fluid

from paddle18_parity import load_family

CASES, H, PATH = load_family("layers_more")
DATA = np.load(PATH)


@pytest.mark.parity
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_matches_paddle18(case):
    H.check(fluid, case, DATA)
