"""lod_tensor_to_array / array_to_lod_tensor on 2- and 3-level LoDs and with a level-1 rank table, and a
DynamicRNN over a 3-level step input, against Paddle 1.8.5 (tests/data/paddle18/make_lod_array_nested.py)."""

import json
import os
import sys

import pytest

import paddle_compat.fluid as fluid

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
sys.path.insert(0, HERE)
import make_lod_array_nested as M  # noqa: E402  (builds the same programs)

REF = json.load(open(os.path.join(HERE, "lod_array_nested.json")))


@pytest.mark.parametrize("name", sorted(M.CASES))
def test_lod_tensor_to_array_and_back(name):
    lengths, level = M.CASES[name]
    assert M.run(fluid, lengths, level) == REF[name]


def test_dynamic_rnn_over_a_three_level_step_input():
    assert M.dynamic_rnn(fluid) == REF["dynamic_rnn_three_levels"]
