"""A fetched gradient carries the LoD Paddle 1.8.5 gives it (grad_lod.json, make_grad_lod.py): its grad op's
ShareLoD, op by op, from a forward input or from an output gradient, and none where Paddle gives none (a
return_numpy=True fetch raises on a LoD)."""

import json
import os
import sys

import numpy as np
import pytest

import paddle_compat.fluid as fluid
from paddle_compat.backends.lowering.codegen import lower_block
from paddle_compat.backends.lowering.interpreter import interpret_block
from paddle_compat.ir import lod_as_tensors

HERE = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, HERE)
from grad_lod_cases import harness_cases, run_case, run_harness_case  # noqa: E402

with open(os.path.join(HERE, "grad_lod.json")) as f:
    RECORDED = json.load(f)
HARNESS = "harness:"


@pytest.mark.parametrize("name", sorted(n for n in RECORDED if not n.startswith(HARNESS)))
def test_fetched_gradient_lod_is_paddles(name):
    got = run_case(fluid, name.split("@")[0], name.endswith("@chained"))
    assert got == RECORDED[name]


@pytest.mark.parametrize("name", sorted(n[len(HARNESS):] for n in RECORDED if n.startswith(HARNESS)))
def test_parity_harness_gradient_lod_is_paddles(name):
    assert run_harness_case(fluid, harness_cases()[name]) == RECORDED[HARNESS + name]


def test_every_harness_case_with_a_lod_input_is_recorded():
    assert set(HARNESS + n for n in harness_cases()) <= set(RECORDED)


def test_the_recording_covers_sharing_and_not_sharing():
    lods = [l for case in RECORDED.values() for l in case.values()]
    assert sum(1 for l in lods if l) >= 40 and sum(1 for l in lods if not l) >= 20


def _lowered_and_interpreted_lods(build):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss, fetch = build()
        fluid.backward.append_backward(loss)
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
    import torch
    x = torch.from_numpy(np.random.RandomState(0).uniform(size=(5, 3)).astype("float32"))
    feeds = [(x, lod_as_tensors([[0, 2, 5]], "cpu"))]
    out = []
    for lower in (lower_block, interpret_block):
        run = lower(main, 0, scope, "cpu", ["x"], fetch, feed_lod={"x"})
        out.append([None if lod is None else [list(map(int, level)) for level in lod] for _, lod in run(feeds)])
    return out


def test_the_interpreter_shares_gradient_lods_as_the_generated_code_does():
    def build():
        x = fluid.layers.data(name="x", shape=[3], dtype="float32", lod_level=1)
        x.stop_gradient = False
        h = fluid.layers.softmax(fluid.layers.relu(x))    # softmax_grad gives none, so relu_grad none either
        y = fluid.layers.sequence_pool(fluid.layers.elementwise_add(h, x), "sum")
        loss = fluid.layers.mean(fluid.layers.fc(y, 2))
        return loss, [loss.name, "x@GRAD", h.name + "@GRAD"]
    lowered, interpreted = _lowered_and_interpreted_lods(build)
    assert lowered == interpreted
    assert lowered[1] == [[0, 2, 5]]     # the sum of x's parts keeps its first part's (elementwise Y's) LoD
    assert lowered[2] == [[0, 2, 5]]     # elementwise_add_grad: X@GRAD takes Out@GRAD's (sequence_pool's)


def test_a_gradient_without_lod_fetches_as_numpy():
    x = fluid.layers.data(name="x", shape=[3], dtype="float32", lod_level=1)
    x.stop_gradient = False
    w = fluid.layers.create_parameter([3, 2], "float32")
    loss = fluid.layers.mean(fluid.layers.matmul(x, w))      # matmul_grad shares no LoD in Paddle 1.8.5
    fluid.backward.append_backward(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    t = fluid.create_lod_tensor(np.ones((5, 3), "float32"), [[2, 3]], fluid.CPUPlace())
    g, = exe.run(feed={"x": t}, fetch_list=["x@GRAD"])
    assert g.shape == (5, 3)
