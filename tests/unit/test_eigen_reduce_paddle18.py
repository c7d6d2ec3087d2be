"""Sums and means (reduce_sum, reduce_mean, mean, squared_l2_norm, clip_by_norm) equal Paddle 1.8.5's bit for bit:
they follow the order Eigen adds in on Paddle's CPU (ops/eigen_reduce.py). Recorded by
tests/data/paddle18/make_eigen_reduce.py."""

import importlib.util
import json
import os

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.ops import eigen_reduce

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "eigen_reduce.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_eigen_reduce", os.path.join(DATA, "make_eigen_reduce.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MK.CASES))
def test_reduction_bits_match_paddle18(name):
    got = MK.run_case(fluid, name)
    assert got == REF[name]


def test_gradient_and_fallbacks():
    import torch
    x = torch.tensor(MK.data([5, 1003], 3), requires_grad=True)
    eigen_reduce.reduce_sum(x, [1], mean=True).sum().backward()
    assert torch.equal(x.grad, torch.full_like(x, 1.0) / 1003)
    # other dtypes and empty tensors take torch's sum
    i = torch.arange(12).reshape(3, 4)
    assert torch.equal(eigen_reduce.reduce_sum(i, [0]), i.sum(0))
    e = torch.zeros(0, 3)
    assert eigen_reduce.reduce_sum(e, None).shape == ()
    # a different order from torch's is the point: the running sum of many small terms after a large one
    big = torch.tensor([1.0e4] + [1.0e-4] * 100007, dtype=torch.float32)
    assert eigen_reduce.reduce_sum(big, None).item() != big.sum().item()
    assert eigen_reduce.reduce_sum(big, None, keep=True).shape == (1,)


def test_bag_lane_sums_equal_numpy_loop():
    """Large float32 sums take torch's embedding_bag for the per-lane running sums; it must add in numpy's
    loop's order, bit for bit (its probe passes on this torch, and so do ragged shapes and signed zeros)."""
    assert eigen_reduce._bag_agrees()
    rs = np.random.RandomState(7)
    for rows, k in [(1, 1), (1, 9000), (3, 4099), (2, 65536), (40, 1700)]:
        a = (rs.randn(rows, k * 8) * 10.0 ** rs.randint(-8, 9, size=(rows, k * 8))).astype(np.float32)
        a[rs.rand(rows, k * 8) < 0.2] = -0.0
        want = eigen_reduce._lane_sums_np(a, rows, k, 8)
        assert eigen_reduce._lane_sums_bag(a, rows, k, 8).tobytes() == want.tobytes()
    x = MK.data([3, 70001], 11)
    assert np.array_equal(eigen_reduce._rows(x).view(np.uint32),
                          (eigen_reduce._fold(eigen_reduce._lane_sums_np(np.ascontiguousarray(x[:, :70000]), 3,
                                                                          8750, 8)) + x[:, 70000]).view(np.uint32))
