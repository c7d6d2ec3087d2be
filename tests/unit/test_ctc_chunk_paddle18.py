"""chunk_eval (IOB, IOE, IOBES, plain; excluded types; LoD and padded), warpctc (loss and logits gradient;
blank first or last; norm_by_times; LoD and padded) and ctc_greedy_decoder (LoD, padded, all blank) against
Paddle 1.8.5 (tests/data/paddle18/make_ctc_chunk.py, cases in ctc_chunk_cases.py)."""

import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
from ctc_chunk_cases import cases, run  # noqa: E402

REF = np.load(os.path.join(DATA, "ctc_chunk.npz"))
CASES = cases()


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_paddle18(name):
    got = run(fluid, CASES[name])
    for i, item in enumerate(got):
        arr, lod = item if isinstance(item, tuple) else (item, None)
        want = REF["%s/%d" % (name, i)]
        assert arr.shape == want.shape, (name, i, arr.shape, want.shape)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(arr, want, rtol=1e-4, atol=1e-6, err_msg="%s/%d" % (name, i))
        else:
            np.testing.assert_array_equal(arr, want, err_msg="%s/%d" % (name, i))
        if "%s/%d/lod" % (name, i) in REF.files:
            assert list(lod) == REF["%s/%d/lod" % (name, i)].tolist()
