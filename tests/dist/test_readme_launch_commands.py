"""The README's four ways to launch, exactly as written there (examples/fleet_*_train.py): launch_ps,
mpiexec, launch and torchrun each run their job to the end with every worker training."""

import os
import re
import signal
import subprocess
import sys

import pytest

from dist_utils import REPO, base_env, free_consecutive_ports
from test_mpi_role_maker import mpiexec

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]


def _run(cmd, timeout=120):
    p = subprocess.Popen(cmd, env=base_env(), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        raise AssertionError("%s did not finish in %ss:\n%s" % (cmd[:4], timeout, out[-3000:]))
    assert p.returncode == 0, out[-4000:]
    return out


def _trained(text, workers=2, steps=3):
    for w in range(workers):
        assert re.search(r"worker %d step +%d loss \d" % (w, steps - 1), text), text[-3000:]


def test_launch_ps(tmp_path):
    _run([sys.executable, "-m", "paddle_compat.distributed.launch_ps", "--server_num", "2", "--worker_num", "2",
          "--start_port", str(free_consecutive_ports(2)), "--log_dir", str(tmp_path),
          "examples/fleet_ps_train.py", "--steps", "3"])
    _trained(open(tmp_path / "workerlog.0").read() + open(tmp_path / "workerlog.1").read())


def test_mpiexec():
    _trained(_run([mpiexec(), "-n", "4", sys.executable, "examples/fleet_ps_train.py", "--steps", "3"]))


def test_launch(tmp_path):
    _run([sys.executable, "-m", "paddle_compat.distributed.launch", "--nproc_per_node", "2",
          "--started_port", str(free_consecutive_ports(2)), "--log_dir", str(tmp_path),
          "examples/fleet_collective_train.py", "--steps", "3"])
    _trained(open(tmp_path / "workerlog.0").read() + open(tmp_path / "workerlog.1").read())


def test_torchrun():
    port = free_consecutive_ports(3)
    _trained(_run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr",
                   "127.0.0.1", "--master_port", str(port), "examples/fleet_collective_train.py", "--steps", "3"]))
