"""Paddle 1.8.5, in a subprocess, loads the files we save for an MLP, a conv net with batch_norm and a CTR
model with a LoD slot (trained 3 steps with Adam): persistables (one file per variable), combined params and
persistables files, the inference model and fluid.save state. From each it predicts our outputs, and from the
ones holding Adam's state it continues training with the losses we get continuing from them (and training on
without saving). The other direction is tests/unit/test_roundtrip_paddle18.py. Runs only where a Paddle
1.8.5 Python is installed."""

import os
import subprocess
import sys

import numpy as np
import pytest

import paddle_compat as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "data", "paddle18"))
import roundtrip_cases as R  # noqa: E402

PADDLE18 = os.environ.get("PADDLE18_PYTHON", "/work/paddle18/bin/python")
SCRIPT = os.path.join(HERE, "scripts", "paddle18_roundtrip.py")

pytestmark = [pytest.mark.dist, pytest.mark.parity,
              pytest.mark.skipif(not os.path.exists(PADDLE18),
                                 reason="needs Paddle 1.8.5's Python at %s (set PADDLE18_PYTHON)" % PADDLE18)]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", R.MODELS)
def test_paddle18_reads_our_files_in_every_format(tmp_path, name):
    d = str(tmp_path / name)
    ours = R.train_and_save(fluid, name, d)
    back = R.read_back(fluid, name, d)
    env = dict(os.environ, GLOG_v="0", OMP_NUM_THREADS="1", CPU_NUM="1")
    env.pop("PYTHONPATH", None)
    # run outside the checkout: its paddle/ package would shadow Paddle's
    r = subprocess.run([PADDLE18, SCRIPT, name, d, str(tmp_path / "paddle.npz")], env=env, cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-4000:]
    got = np.load(str(tmp_path / "paddle.npz"))
    for fmt in R.PREDICT_FORMATS:
        np.testing.assert_allclose(got["pred_" + fmt], ours["pred"], rtol=0, atol=1e-6, err_msg=fmt)
    for fmt in R.TRAIN_FORMATS:
        np.testing.assert_allclose(back["loss_" + fmt], ours["straight_losses"], rtol=1e-6, err_msg=fmt)
        np.testing.assert_allclose(got["loss_" + fmt], back["loss_" + fmt], rtol=1e-6, err_msg=fmt)   # 1.4e-7
