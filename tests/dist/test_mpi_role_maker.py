"""MPISymetricRoleMaker under a real `mpiexec -n 4` (mpich from pip): even ranks serve, odd ranks train,
endpoints agree across ranks and are distinct on one host, and worker barriers/allreduce use MPI."""

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from dist_utils import base_env

pytestmark = [pytest.mark.dist, pytest.mark.mpi]
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "mpi_roles.py")


def mpiexec():
    for cand in (os.path.join(os.path.dirname(sys.executable), "mpiexec"), shutil.which("mpiexec")):
        if cand and os.path.exists(cand):
            return cand
    pytest.skip("mpiexec not found (pip install mpich)")


def run_mpi(cmd, timeout):
    """mpiexec in its own process group, killed as a whole on timeout (no rank outlives the test)."""
    p = subprocess.Popen(cmd, env=base_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        raise AssertionError("mpiexec did not finish in %ss:\n%s\n%s" % (timeout, out, err))
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def test_symmetric_roles_under_mpiexec(tmp_path):
    out = run_mpi([mpiexec(), "-n", "4", sys.executable, SCRIPT, str(tmp_path)], timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [json.load(open(tmp_path / ("rank%d.json" % i))) for i in range(4)]
    assert [r["server"] for r in rows] == [True, False, True, False]
    assert [r["index"] for r in rows] == [0, 0, 1, 1]
    assert [r["first"] for r in rows] == [False, True, False, False]
    assert all(r["servers"] == rows[0]["servers"] and r["workers"] == rows[0]["workers"] for r in rows)
    eps = rows[0]["servers"] + rows[0]["workers"]
    assert len(set(eps)) == 4 and all(e.startswith("127.0.0.1:") for e in eps)
    assert [r["worker_sum"] for r in rows if r["worker"]] == [3, 3]   # (0+1) + (1+1)
    # no job key given: rank 0 made one and MPI handed it to every rank
    assert len({r["key"] for r in rows}) == 1 and {r["key_source"] for r in rows} == {"PADDLE_COMPAT_JOB_TOKEN"}
