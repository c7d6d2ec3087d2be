"""`python -m paddle_compat.distributed.launch --nproc_per_node 2` runs a Fleet collective job end to end:
the trainers find each other from the launcher's PADDLE_* variables alone (PaddleCloudRoleMaker
(is_collective=True)) and train as one process averaging their gradients would."""

import os
import subprocess
import sys

import numpy as np
import pytest

import dp_reference
from dist_utils import base_env, free_consecutive_ports
from test_collective_dist import SCRIPT, T

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]


def test_launch_runs_fleet_collective(tmp_path):
    cmd = [sys.executable, "-m", "paddle_compat.distributed.launch", "--nproc_per_node", "2",
           "--started_port", str(free_consecutive_ports(2)), "--log_dir", str(tmp_path / "log"),
           SCRIPT, "--configs", "fleet_nccl2", "--steps", "3", "--out", str(tmp_path)]
    r = subprocess.run(cmd, env=base_env(FLAGS_rpc_deadline=60000), capture_output=True, text=True, timeout=200)
    logs = "".join(open(tmp_path / "log" / f).read()[-2000:] for f in sorted(os.listdir(tmp_path / "log")))
    assert r.returncode == 0, r.stderr + logs
    ref_losses, _ = dp_reference.averaged_sgd(T.build, lambda s: [T.feed(s, 0), T.feed(s, 1)], 3, 0.1)
    got = [np.load(str(tmp_path / ("fleet_nccl2_%d.npz" % t))) for t in (0, 1)]
    for t in (0, 1):
        np.testing.assert_allclose(got[t]["losses"], ref_losses[:, t], rtol=0, atol=1e-5)
    for p in T.PARAMS:
        assert np.array_equal(got[0][p], got[1][p]), p
