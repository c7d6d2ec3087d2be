"""incubate.data_generator writes the same MultiSlot lines as Paddle 1.8.5 (data_generator.json)."""

import json
import os
import sys

import pytest

import paddle_compat.fluid.incubate.data_generator as dg

HERE = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, HERE)
from data_generator_cases import cases  # noqa: E402

with open(os.path.join(HERE, "data_generator.json")) as f:
    REF = json.load(f)
OURS = cases(dg)


@pytest.mark.parametrize("name", sorted(REF))
def test_lines_match_paddle(name):
    assert OURS[name] == REF[name]


def test_reference_covers_lines():
    assert REF["basic_stdin"].count("\n") == 7 and "2.5e+20" in REF["basic_stdin"]


def test_bad_value_type_names_slot():
    class G(dg.MultiSlotDataGenerator):
        pass
    with pytest.raises(ValueError, match="slot 'w'.*str"):
        G()._gen_str([("w", ["x"])])


def test_generate_sample_required():
    with pytest.raises(NotImplementedError, match="generate_sample"):
        dg.MultiSlotDataGenerator().run_from_memory()
