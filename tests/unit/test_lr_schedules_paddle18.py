"""Every schedule of layers.learning_rate_scheduler against Paddle 1.8.5 (tests/data/paddle18/make_lr_schedules.py):
the float32 learning rate of each of 20 steps bit for bit, and the schedule's ops and persistable vars.

Paddle 1.8's own test_learning_rate_scheduler.py compares with assertAlmostEqual(python_float, np.float32, 7
places); under NumPy >= 2 that difference is taken in float32 and misses by one float32 step although the
values here equal 1.8.5's bits (it passes under NumPy 1.x, as it does for 1.8.5)."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "lr_schedules.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_lr_schedules", os.path.join(DATA, "make_lr_schedules.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


def test_every_schedule_is_recorded():
    assert sorted(REF["cases"]) == sorted(MK.CASES)
    names = {n.split("_")[0] if not n.startswith("p18_") else n.split("_")[1] for n in MK.CASES}
    # one family per public schedule of layers.learning_rate_scheduler
    assert {"exponential", "natural", "inverse", "polynomial", "piecewise", "noam", "cosine",
            "warmup"} <= names
    assert set(fluid.layers.learning_rate_scheduler.__all__) == {
        "exponential_decay", "natural_exp_decay", "inverse_time_decay", "polynomial_decay", "piecewise_decay",
        "noam_decay", "cosine_decay", "linear_lr_warmup"}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_schedule_bits_match_paddle18(name):
    want = np.array(REF["cases"][name]["bits"], "uint32")
    got = MK.run_case(fluid, name, steps=REF["steps"]).view("uint32")
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, "%s: step %d: %.9g here, %.9g in Paddle 1.8.5" % (
        name, bad[0], got.view("float32")[bad[0]], want.view("float32")[bad[0]])


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_schedule_program_matches_paddle18(name):
    ops, persistable, lr_name = MK.structure(fluid, name)
    want = REF["cases"][name]
    assert ops == want["ops"]
    assert persistable == want["persistable"]
    assert lr_name == want["lr_name"]
