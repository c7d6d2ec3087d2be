"""Random layers, mean_iou, gather_tree and linear_lr_warmup of Paddle 1.8 against Paddle 1.8.5.

Deterministic layers are compared number for number; random layers by shape, dtype, range and sample
statistics recorded from Paddle (another generator cannot give its numbers)."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid

from paddle18_parity import DATA, load_family

CASES, H, PATH = load_family("random_misc")
NPZ = np.load(PATH)
with open(os.path.join(DATA, "random_misc.json")) as fh:
    REF = json.load(fh)

import make_random_misc as M  # noqa: E402  (on sys.path after load_family)


@pytest.mark.parity
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_matches_paddle18(case):
    H.check(fluid, case, NPZ)


@pytest.mark.parity
def test_linear_lr_warmup_matches_paddle18():
    np.testing.assert_allclose(M.lr_trace(fluid), REF["lr_trace"], rtol=1e-6)


@pytest.fixture(scope="module")
def samples():
    return M.random_samples(fluid)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(REF["stats"]))
def test_random_layer_statistics_match_paddle18(samples, name):
    ref, got = REF["stats"][name], samples[name]
    assert list(got.shape) == ref["shape"], name
    assert str(got.dtype) == ref["dtype"], name
    if ref["dtype"].startswith("int"):
        assert got.min() >= ref["min"] and got.max() <= ref["max"], name
    elif "gauss" in name or "randn" in name:
        # unbounded: a sample's extremes vary from draw to draw; none is beyond 6.5 standard deviations
        assert np.abs(got - ref["mean"]).max() <= 6.5 * ref["std"], name
    else:
        spread = ref["max"] - ref["min"]
        assert ref["min"] - 0.1 * spread <= got.min() and got.max() <= ref["max"] + 0.1 * spread, name
    n = got.size
    # Means within 5 standard errors, standard deviations within 10% of Paddle's samples.
    assert abs(got.mean() - ref["mean"]) < 5 * ref["std"] / np.sqrt(n) * 2, (name, got.mean(), ref["mean"])
    assert abs(got.std() - ref["std"]) < 0.1 * ref["std"], (name, got.std(), ref["std"])


@pytest.mark.parity
def test_random_discrete_layers_match_paddle18(samples):
    assert sorted(samples["randperm"].tolist()) == REF["randperm_sorted"]
    assert sorted(set(samples["randint"].tolist())) == REF["randint_values"]
    freq = np.bincount(samples["sampling_id"].astype("int64"), minlength=4)
    np.testing.assert_allclose(freq / freq.sum(), np.array(REF["sampling_id_freq"]) / 4000.0, atol=0.03)
    np.testing.assert_allclose(freq / freq.sum(), [0.1, 0.2, 0.3, 0.4], atol=0.03)


def test_seeded_random_layers_repeat():
    a = M.random_samples(fluid)
    b = M.random_samples(fluid)
    for name in ("gaussian_random", "uniform_random", "randint", "randperm", "sampling_id",
                 "uniform_random_batch_size_like", "gaussian_random_batch_size_like"):
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.parity
def test_edit_distance_on_lod_matches_paddle18():
    dist, num = M.edit_distance_lod(fluid)
    np.testing.assert_allclose(dist, REF["edit_distance_lod"][0], rtol=1e-6)
    assert num == REF["edit_distance_lod"][1]
