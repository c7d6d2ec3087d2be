"""Fleet in pserver mode with real processes, 2 pservers + 2 workers on 127.0.0.1, started every way a
Fleet 1.x job is: UserDefinedRoleMaker (our own launch), PaddleCloudRoleMaker under
`python -m paddle_compat.distributed.launch_ps`, and MPISymetricRoleMaker under `mpiexec -n 4`.
Losses equal one process averaging the workers' gradients; fleet.barrier_worker() waits for a late worker;
worker 0's fleet.save_persistables and a restart with fleet.init_server(model_dir) continue exactly."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import paddle_compat as fluid
from dist_utils import Cluster, base_env, endpoints, free_consecutive_ports
from ps_cluster import local_losses
from test_mpi_role_maker import mpiexec, run_mpi

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "fleet_ps_node.py")


def _rows(result_dir):
    return {t: json.load(open(os.path.join(result_dir, "worker%d.json" % t))) for t in range(2)}


def _results(result_dir):
    return {t: row["losses"] for t, row in _rows(result_dir).items()}


def _close(got, want, what):
    for t in range(2):
        np.testing.assert_allclose(got[t], want[t], rtol=0, atol=1e-5, err_msg="%s worker %d" % (what, t))


def run_user_defined(tmp_path, spec):
    """2 pservers + 2 workers of fleet_ps_node.py with UserDefinedRoleMaker; every process must exit 0."""
    eps = endpoints(2)
    common = dict(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=2, FLAGS_rpc_deadline=20000,
                  RESULT_DIR=str(tmp_path), TORCH_CPP_LOG_LEVEL="ERROR")
    with Cluster(tmp_path) as c:
        for i, ep in enumerate(eps):
            c.start("ps%d" % i, [SCRIPT, "userdefined", json.dumps(spec)],
                    base_env(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep, **common))
        for t in range(2):
            c.start("tr%d" % t, [SCRIPT, "userdefined", json.dumps(spec)],
                    base_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=t, **common))
        rcs = c.wait(150)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
        assert "SERVED 1" in c.procs[1].output
    return _rows(tmp_path)


def test_user_defined_role_maker_trains_like_averaged_gradients(tmp_path):
    spec = {"model": "mlp", "opt": "sgd", "slice": True, "split": "rr", "steps": 4, "barrier": True}
    rows = run_user_defined(tmp_path, spec)
    _close({t: r["losses"] for t, r in rows.items()}, local_losses(fluid, spec), "UserDefinedRoleMaker")
    assert rows[0]["barrier_wait"] > 1.0, "fleet.barrier_worker() did not wait for the late worker"


def _launch_ps(tmp_path, spec, name):
    out_dir = tmp_path / name
    out_dir.mkdir()
    cmd = [sys.executable, "-m", "paddle_compat.distributed.launch_ps", "--server_num", "2", "--worker_num", "2",
           "--start_port", str(free_consecutive_ports(2)), "--log_dir", str(out_dir / "log"),
           SCRIPT, "paddlecloud", json.dumps(spec)]
    r = subprocess.run(cmd, env=base_env(RESULT_DIR=str(out_dir), FLAGS_rpc_deadline=20000,
                                         TORCH_CPP_LOG_LEVEL="ERROR"),
                       capture_output=True, text=True, timeout=200)
    logs = "".join("---- %s\n%s" % (f, open(out_dir / "log" / f).read()[-3000:])
                   for f in sorted(os.listdir(out_dir / "log")))
    assert r.returncode == 0, r.stderr + logs
    return _results(out_dir)


def test_paddlecloud_under_launch_ps_then_save_and_resume_with_init_server(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    spec = {"model": "mlp", "opt": "adam", "slice": True, "split": "hash", "steps": 5}
    full = _launch_ps(tmp_path, dict(spec, save_dir=ckpt, save_at=3), "full")
    _close(full, local_losses(fluid, spec), "PaddleCloudRoleMaker under launch_ps")
    assert "fc_0.w_0" in os.listdir(ckpt) and "fc_0.w_0_moment1_0" in os.listdir(ckpt)
    resumed = _launch_ps(tmp_path, dict(spec, start=3, load_dir=ckpt), "resumed")
    for t in range(2):
        np.testing.assert_allclose(resumed[t], full[t][3:], rtol=0, atol=1e-6, err_msg="worker %d" % t)


def test_mpiexec_four_ranks_with_the_default_role_maker(tmp_path):
    spec = {"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 4, "strategy": "sync"}
    env_cmd = [mpiexec(), "-n", "4", "-genv", "RESULT_DIR", str(tmp_path), "-genv", "FLAGS_rpc_deadline", "20000",
               sys.executable, SCRIPT, "mpi", json.dumps(spec)]
    r = run_mpi(env_cmd, timeout=150)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    _close(_results(tmp_path), local_losses(fluid, spec), "MPISymetricRoleMaker under mpiexec")
