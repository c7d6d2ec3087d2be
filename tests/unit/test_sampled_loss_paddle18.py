"""nce, hsigmoid and sampled_softmax_with_cross_entropy against Paddle 1.8.5 (tests/data/paddle18/
make_sampled_loss.py, cases in sampled_loss_cases.py): forward cost, the input's gradient and each parameter
after one SGD step (dense and is_sparse row gradients), with nce's negatives fixed by custom_neg_classes."""

import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
from sampled_loss_cases import cases, run  # noqa: E402

REF = np.load(os.path.join(DATA, "sampled_loss.npz"))
CASES = cases()


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_paddle18(name):
    got = run(fluid, name, CASES[name])
    for k, v in got.items():
        np.testing.assert_allclose(v, REF["%s/%s" % (name, k)], rtol=1e-4, atol=1e-5, err_msg="%s/%s" % (name, k))


def test_default_tree_paths_have_bit_length_minus_one_steps():
    """hsigmoid's default tree: class c walks bit_length(c + num_classes) - 1 nodes. Computed with integer
    ops only (floor(log2) in floating point came out one short for powers of two on CUDA)."""
    import torch
    from paddle_compat.ops.defs.sampled_loss import _tree_code
    for classes in (2, 3, 4, 5, 8, 9, 16, 17, 1000):
        labels = torch.arange(classes)
        idx, bit, mask = _tree_code(labels, classes, None, None)
        for c in range(classes):
            code = c + classes
            steps = code.bit_length() - 1
            assert mask[c].tolist() == [j < steps for j in range(mask.shape[1])], (classes, c)
            assert idx[c, :steps].tolist() == [(code >> (j + 1)) - 1 for j in range(steps)]
            assert bit[c, :steps].tolist() == [(code >> j) & 1 for j in range(steps)]
