"""Shape, index and layout layers of Paddle 1.8 against Paddle 1.8.5's recorded forward and gradient numbers."""

import numpy as np
import pytest

import paddle_compat as fluid

from paddle18_parity import load_family

CASES, H, PATH = load_family("shape_more")
DATA = np.load(PATH)


@pytest.mark.parity
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_matches_paddle18(case):
    H.check(fluid, case, DATA)
