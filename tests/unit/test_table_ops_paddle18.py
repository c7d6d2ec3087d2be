"""Paddle's table ops run one at a time through fluid.op.Operator (as Paddle's op tests drive them) give
Paddle 1.8.5's outputs: split_ids by id % n (dense ids, and a SelectedRows filled in place), merge_ids over
rows in any order, lookup_sparse_table growing its rows on first use (is_test: zeros for unknown ids),
ref_by_trainer_id. Recorded by tests/data/paddle18/make_table_ops.py (table_ops.json)."""

import json
import os
import sys

import pytest

import paddle_compat  # noqa: F401  (the `paddle` namespace)
import paddle.fluid as fluid

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
sys.path.insert(0, HERE)
import table_op_cases  # noqa: E402
from nested_close import nested_close  # noqa: E402

WANT = json.load(open(os.path.join(HERE, "table_ops.json")))


def _close(a, b):
    return nested_close(a, b, rtol=1e-6, atol=0)


@pytest.mark.parametrize("case", table_op_cases.CASES, ids=lambda c: c.__name__)
def test_matches_paddle18(case):
    import paddle.fluid.core as core
    from paddle.fluid.op import Operator
    got = json.loads(json.dumps(case(fluid, core, Operator, core.CPUPlace())))
    assert _close(got, WANT[case.__name__]), (got, WANT[case.__name__])
