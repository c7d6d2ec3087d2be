"""fluid.average.WeightedAverage against Paddle 1.8.5 (tests/data/paddle18/make_average.py runs the same
cases there): the running weighted means and the errors."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat.fluid as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "average.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_average", os.path.join(DATA, "make_average.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


@pytest.mark.parametrize("case", sorted(MK.CASES))
def test_weighted_average_matches_paddle18(case):
    got, want = MK.run(fluid, case), REF[case]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, list) and w and w[0] == "ValueError":
            assert g == w
        else:
            np.testing.assert_allclose(np.array(g, "float64"), np.array(w, "float64"), rtol=1e-6)


def test_deprecation_warning():
    with pytest.warns(Warning, match="deprecated"):
        fluid.average.WeightedAverage()
