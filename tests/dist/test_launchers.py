"""The launchers set Paddle's environment for each child, write per-process logs, and stop everything
(exiting non-zero, naming the culprit) when one child fails."""

import json
import os
import subprocess
import sys
import time

import pytest

from dist_utils import base_env

pytestmark = pytest.mark.dist
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "env_echo.py")


def _launch(module, args, timeout=60):
    cmd = [sys.executable, "-m", "paddle_compat.distributed." + module] + args
    return subprocess.run(cmd, env=base_env(), capture_output=True, text=True, timeout=timeout)


def _read(d, name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def test_launch_sets_collective_env(tmp_path):
    r = _launch("launch", ["--nproc_per_node", "2", "--started_port", "6370", "--log_dir", str(tmp_path / "log"),
                           SCRIPT, str(tmp_path), "ok"])
    assert r.returncode == 0, r.stderr
    t0, t1 = _read(tmp_path, "TRAINER_0.json"), _read(tmp_path, "TRAINER_1.json")
    assert t0["PADDLE_TRAINER_ENDPOINTS"] == "127.0.0.1:6370,127.0.0.1:6371"
    assert t1["PADDLE_CURRENT_ENDPOINT"] == "127.0.0.1:6371" and t1["PADDLE_TRAINERS_NUM"] == "2"
    assert sorted(os.listdir(tmp_path / "log")) == ["workerlog.0", "workerlog.1"]
    assert "hello from TRAINER 1" in open(tmp_path / "log" / "workerlog.1").read()
    _check_job_key(t0, t1)


def _check_job_key(*rows):
    """The launcher handed every child the same fresh 0600 key file (no key value in the environment) and
    deleted it when the job ended."""
    files = {r["PADDLE_COMPAT_JOB_TOKEN_FILE"] for r in rows}
    assert len(files) == 1 and None not in files, rows
    assert {r["key_file_mode"] for r in rows} == {"0o600"} and {r["PADDLE_COMPAT_JOB_TOKEN"] for r in rows} == {None}
    assert not os.path.exists(files.pop())


def test_launch_multi_node_ranks(tmp_path):
    r = _launch("launch", ["--cluster_node_ips", "127.0.0.2,127.0.0.1", "--node_ip", "127.0.0.1",
                           "--nproc_per_node", "2", "--started_port", "6380", SCRIPT, str(tmp_path), "ok"])
    assert r.returncode == 0, r.stderr
    t = _read(tmp_path, "TRAINER_3.json")   # this node holds ranks 2 and 3
    assert t["PADDLE_TRAINERS_NUM"] == "4" and t["PADDLE_CURRENT_ENDPOINT"] == "127.0.0.1:6381"
    assert t["PADDLE_TRAINER_ENDPOINTS"].split(",")[0] == "127.0.0.2:6380"


def test_launch_stops_all_when_one_fails(tmp_path):
    t0 = time.monotonic()
    r = _launch("launch", ["--nproc_per_node", "2", "--log_dir", str(tmp_path / "log"),
                           SCRIPT, str(tmp_path), "fail_trainer_1"])
    assert r.returncode == 1
    assert "trainer 1" in r.stderr and "exited with code 3" in r.stderr and "workerlog.1" in r.stderr
    assert time.monotonic() - t0 < 30, "the hanging trainer 0 must have been stopped"


def test_launch_rejects_bad_arguments():
    r = _launch("launch", ["--node_ip", "127.0.0.9", SCRIPT, "/tmp", "ok"])
    assert r.returncode == 2 and "--node_ip 127.0.0.9 is not in --cluster_node_ips" in r.stderr


def test_launch_ps_sets_pserver_env(tmp_path):
    r = _launch("launch_ps", ["--server_num", "2", "--worker_num", "2", "--start_port", "6390",
                              "--log_dir", str(tmp_path / "log"), SCRIPT, str(tmp_path), "ok"])
    assert r.returncode == 0, r.stderr
    s1, w1 = _read(tmp_path, "PSERVER_1.json"), _read(tmp_path, "TRAINER_1.json")
    assert s1["PADDLE_PSERVERS_IP_PORT_LIST"] == "127.0.0.1:6390,127.0.0.1:6391"
    assert s1["PADDLE_PORT"] == "6391" and s1["POD_IP"] == "127.0.0.1" and s1["PADDLE_TRAINERS_NUM"] == "2"
    assert w1["TRAINING_ROLE"] == "TRAINER" and w1["PADDLE_TRAINER_ID"] == "1"
    assert sorted(os.listdir(tmp_path / "log")) == ["serverlog.0", "serverlog.1", "workerlog.0", "workerlog.1"]
    _check_job_key(s1, w1, _read(tmp_path, "PSERVER_0.json"), _read(tmp_path, "TRAINER_0.json"))


def test_launch_ps_endpoints_and_server_grace(tmp_path):
    t0 = time.monotonic()
    r = _launch("launch_ps", ["--server_num", "1", "--worker_num", "1", "--endpoints", "127.0.0.1:6400",
                              "--server_grace", "1", SCRIPT, str(tmp_path), "server_waits"])
    assert r.returncode == 0, r.stderr
    assert _read(tmp_path, "PSERVER_0.json")["PADDLE_PORT"] == "6400"
    assert time.monotonic() - t0 < 30


def test_launch_ps_stops_all_when_a_worker_fails(tmp_path):
    r = _launch("launch_ps", ["--server_num", "1", "--worker_num", "2", SCRIPT, str(tmp_path), "fail_trainer_1"])
    assert r.returncode == 1 and "worker 1" in r.stderr and "exited with code 3" in r.stderr


def test_launch_ps_rejects_mismatched_endpoints():
    r = _launch("launch_ps", ["--server_num", "3", "--endpoints", "127.0.0.1:1,127.0.0.1:2", SCRIPT, "/tmp", "ok"])
    assert r.returncode == 2 and "lists 2 servers but --server_num is 3" in r.stderr
