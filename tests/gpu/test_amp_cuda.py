"""contrib.mixed_precision on CUDA: the white ops dispatch float16 (and, asked for, bfloat16) products and
convolutions on the GPU, the losses stay close to float32 on the GPU, the master weights stay float32, the
dynamic loss-scaling decisions are Paddle 1.8.5's recorded ones (tests/data/paddle18/amp.json) on the GPU too,
and whole-step CUDA-graph capture gives the losses of the uncaptured step. The CPU side of all this:
tests/unit/test_amp_execution.py and tests/unit/test_amp_paddle18.py."""

import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "unit"))
sys.path.insert(0, os.path.join(HERE, "..", "data", "paddle18"))


def _cuda():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _cuda(), reason="needs a CUDA device")]


@pytest.fixture(autouse=True)
def _no_tf32():
    import torch       # float32 references without TF32, as CUDAPlace runs
    old = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


@pytest.mark.parametrize("net", ["mlp", "conv"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_white_ops_run_low_precision_on_cuda_close_to_float32(net, dtype):
    import torch
    import test_amp_execution as X
    ref, _, _, _ = X.train(net, place=fluid.CUDAPlace(0))
    out = {}
    seen = X.product_dtypes(lambda: out.update(r=X.train(net, dtype, place=fluid.CUDAPlace(0))))
    got, white, params, _ = out["r"]
    assert white.is_cuda and white.dtype == getattr(torch, dtype)
    assert seen and all(dts == (dtype,) * len(dts) for _, dts in seen), seen
    assert {"mm"} <= set(op for op, _ in seen)
    if net == "conv":
        assert {"convolution", "convolution_backward"} <= set(op for op, _ in seen)
    np.testing.assert_allclose(got, ref, rtol=2e-3 if dtype == "float16" else 1e-2)
    assert all(t.dtype == torch.float32 and t.is_cuda for t in params.values())
    # and the CPU's numbers: the same program on the CPU
    cpu, _, _, _ = X.train(net, dtype)
    np.testing.assert_allclose(got, cpu, rtol=5e-3 if dtype == "float16" else 2e-2)


@pytest.mark.parametrize("name", ["sawtooth_sgd", "sawtooth_momentum", "counters", "incr_overflow"])
def test_loss_scaling_decisions_on_cuda_match_paddle18(name, monkeypatch):
    import make_amp as M
    import test_amp_paddle18 as P
    ref = P.REF["runs"][name]
    gpu = fluid.CUDAPlace(0)
    monkeypatch.setattr(fluid, "CPUPlace", lambda: gpu)     # _train's executor on the GPU
    got = P._train(name)
    np.testing.assert_array_equal(np.float32(got["loss_scaling"]), np.float32(ref["loss_scaling"]))
    assert [int(v) for v in got["good"]] == ref["good"] and [int(v) for v in got["bad"]] == ref["bad"]
    assert P._moved(got["params"], None) == P._moved(ref["params"], None)
    np.testing.assert_allclose(np.float32(got["loss"]), np.float32(ref["loss"]), rtol=1e-4, equal_nan=True)
    assert len(M.FEEDS) >= M.STEPS


def test_capture_gives_the_uncaptured_losses(monkeypatch):
    import test_amp_execution as X
    monkeypatch.setenv("FLAGS_cuda_graph_capture", "0")
    off, _, _, _ = X.train("conv", "float16", place=fluid.CUDAPlace(0))
    monkeypatch.setenv("FLAGS_cuda_graph_capture", "1")
    on, _, _, _ = X.train("conv", "float16", place=fluid.CUDAPlace(0))
    np.testing.assert_allclose(on, off, rtol=1e-5)
