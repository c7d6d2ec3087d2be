"""A second (and third) append_backward / minimize over the same program against Paddle 1.8.5
(tests/data/paddle18/make_backward_twice.py builds the same programs there): the gradients a later backward
writes are named apart ('grad/' * k + name where the name exists), its grad ops read those, the
(param, grad) pairs name them, and two optimizers trained together move the parameters as 1.8.5's do.
Grad ops are compared by type, the gradients they read and what they write (ours also list the forward
op's inputs: backward.py)."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat.fluid as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "backward_twice.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_backward_twice", os.path.join(DATA, "make_backward_twice.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


@pytest.fixture(scope="module", params=MK.CASES)
def case(request):
    return request.param, MK.record(fluid, request.param), REF[request.param]


def test_recorded_cases():
    assert sorted(REF) == sorted(MK.CASES)


def test_ops_and_gradient_names_match_paddle18(case):
    _, got, want = case
    assert got["ops"] == want["ops"]
    assert got["vars"] == want["vars"]


def test_params_grads_match_paddle18(case):
    _, got, want = case
    assert got["params_grads"] == want["params_grads"]
    assert any(g.startswith("grad/grad/") for pg in got["params_grads"][1:] for _, g in pg)


def test_two_optimizers_train_as_paddle18(case):
    name, got, want = case
    if name != "two_minimizes":
        pytest.skip("a training case only")
    for g, w in zip(got["steps"], want["steps"]):
        for a, b in zip(g, w):
            np.testing.assert_allclose(np.array(a, "float64"), np.array(b, "float64"), rtol=1e-4, atol=1e-6)
