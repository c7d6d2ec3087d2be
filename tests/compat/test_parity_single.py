"""Parity with real PaddlePaddle 1.8.5 (tests/data/paddle18/make_single_process.py) and 3.3.1: same data, same
initial weights, same per-step losses. Where the two Paddles differ (Adam's epsilon: 1.8.5 adds it unscaled,
2.x+ scales it by sqrt(1 - beta2^t)), we follow 1.8.5."""

import json
import os


import numpy as np
import pytest

import paddle_compat as fluid
import reference_data as R

pytestmark = pytest.mark.parity

FIT_X, FIT_Y, MNIST_X, MNIST_Y = R.make_data()
FIT_INIT, MLP_INIT = R.make_init()
REF = R.load_reference()
with open(os.path.join(os.path.dirname(__file__), "..", "data", "paddle18", "single_process_losses.json")) as _fh:
    REF18 = json.load(_fh)
# cases whose formulas changed after Paddle 1.8 (checked against 1.8.5 only)
CHANGED_SINCE_18 = {"mlp/adam"}


def _train(build, feeds, steps=20):
    loss = build()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(fluid.default_startup_program())
    return np.array([float(exe.run(feed=feeds(s), fetch_list=[loss])[0]) for s in range(steps)])


CASES = {
    "fit_a_line/sgd": (lambda: R.build_fit_a_line(fluid, FIT_INIT),
                       lambda s: {"x": R.batch(FIT_X, s), "y": R.batch(FIT_Y, s)}),
    "mlp/sgd": (lambda: R.build_mlp(fluid, MLP_INIT, "sgd"),
                lambda s: {"img": R.batch(MNIST_X, s), "label": R.batch(MNIST_Y, s)}),
    "mlp/adam": (lambda: R.build_mlp(fluid, MLP_INIT, "adam"),
                 lambda s: {"img": R.batch(MNIST_X, s), "label": R.batch(MNIST_Y, s)}),
}


@pytest.mark.parametrize("ref_name", ["paddle18", "paddle331"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_losses_match_paddle(case, ref_name):
    if ref_name == "paddle331" and case in CHANGED_SINCE_18:
        pytest.skip("Paddle changed this formula after 1.8; we follow 1.8.5")
    build, feeds = CASES[case]
    ours = _train(build, feeds)
    ref = np.array((REF18 if ref_name == "paddle18" else REF)["single_static/" + case])
    rel = np.abs(ours - ref) / np.abs(ref)
    # The reference README: MLP/SGD at lr 0.1 amplifies rounding chaotically after ~13 steps; compare
    # 12 steps strictly there. Everything else is held to 1e-4 at all 20 steps.
    strict = 12 if case == "mlp/sgd" else 20
    assert rel[:strict].max() < 1e-4, (case, rel)
    assert rel.max() < 1e-2, (case, rel)


@pytest.mark.gpu
@pytest.mark.skipif("not __import__('torch').cuda.is_available()", reason="needs a CUDA device")
def test_mlp_adam_on_cuda_place():
    build, feeds = CASES["mlp/adam"]
    loss = build()
    exe = fluid.Executor(fluid.CUDAPlace(0))
    exe.run(fluid.default_startup_program())
    ours = np.array([float(exe.run(feed=feeds(s), fetch_list=[loss])[0]) for s in range(20)])
    ref = np.array(REF18["single_static/mlp/adam"])
    assert (np.abs(ours - ref) / np.abs(ref)).max() < 1e-4
