"""Model files written by Paddle 1.8.5 in every format load here: an MLP, a conv net with batch_norm and a
CTR model with a LoD slot, trained 3 steps with Adam by Paddle and saved as persistables (one file per
variable), combined params / persistables files, an inference model and fluid.save state
(tests/data/paddle18/roundtrip/, make_roundtrip.py). Loaded from each, we predict Paddle's outputs, and
continuing training from the files holding Adam's state gives the losses Paddle recorded continuing from them.
The reverse direction (Paddle 1.8.5 reads our files) is tests/dist/test_paddle18_roundtrip.py."""

import os
import pickle
import sys

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "paddle18")
sys.path.insert(0, DATA)
import roundtrip_cases as R  # noqa: E402

pytestmark = pytest.mark.parity


@pytest.fixture(scope="module", params=R.MODELS)
def case(request):
    name = request.param
    ref = dict(np.load(os.path.join(DATA, "roundtrip", name + ".npz")))
    return name, ref, R.read_back(fluid, name, os.path.join(DATA, "roundtrip", name))


@pytest.mark.parametrize("fmt", R.PREDICT_FORMATS)
def test_predicts_paddles_outputs(case, fmt):
    name, ref, got = case
    # measured: 6e-8
    np.testing.assert_allclose(got["pred_" + fmt], ref["pred"], rtol=0, atol=1e-6, err_msg="%s %s" % (name, fmt))
    np.testing.assert_allclose(ref["pred_" + fmt], ref["pred"], rtol=0, atol=1e-6)   # Paddle's own read-back


@pytest.mark.parametrize("fmt", R.TRAIN_FORMATS)
def test_continues_training_as_paddle_did(case, fmt):
    name, ref, got = case
    # measured: 1.6e-7 (conv), 0 (mlp, ctr)
    np.testing.assert_allclose(got["loss_" + fmt], ref["loss_" + fmt], rtol=1e-6, err_msg="%s %s" % (name, fmt))


@pytest.mark.parametrize("name", R.MODELS)
def test_we_write_the_files_paddle_writes(name, tmp_path):
    # same file names, same variables in the state files (Adam's moments and beta pows in .pdopt), and
    # combined files of the same size (same variables, order and shapes)
    theirs, ours = os.path.join(DATA, "roundtrip", name), str(tmp_path)
    R.train_and_save(fluid, name, ours)
    for sub in ("persistables", "inference", "combined"):
        assert sorted(os.listdir(os.path.join(ours, sub))) == sorted(os.listdir(os.path.join(theirs, sub))), sub
    for f in ("combined/params", "combined/persistables"):
        assert os.path.getsize(os.path.join(ours, f)) == os.path.getsize(os.path.join(theirs, f)), f
    for ext in ("pdparams", "pdopt"):     # the same variables in each file
        with open(os.path.join(theirs, "state." + ext), "rb") as f, open(os.path.join(ours, "state." + ext), "rb") as g:
            assert sorted(pickle.load(g)) == sorted(pickle.load(f, encoding="latin1")), ext
    ref = fluid.io.load_program_state(os.path.join(theirs, "state"))
    got = fluid.io.load_program_state(os.path.join(ours, "state"))
    assert sorted(got) == sorted(ref)
    params = [n for n in ref if n + "_moment1_0" in ref]
    assert params and all(n + s in ref for n in params
                          for s in ("_moment2_0", "_beta1_pow_acc_0", "_beta2_pow_acc_0"))
    for n, v in ref.items():
        assert got[n].shape == v.shape and got[n].dtype == v.dtype, n
