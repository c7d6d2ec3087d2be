"""The main job (`./dev run`): examples/cluster_demo.py starts 2 pservers + 2 trainers itself, prints their
losses and exits 0 when every process did."""

import subprocess
import sys

import pytest

from dist_utils import REPO, base_env

pytestmark = [pytest.mark.dist, pytest.mark.timeout(180)]


def test_cluster_demo_runs_and_cleans_up():
    out = subprocess.run([sys.executable, "examples/cluster_demo.py", "--steps", "5"], cwd=REPO,
                         env=base_env(TORCH_CPP_LOG_LEVEL="ERROR"), capture_output=True, text=True, timeout=150)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert "[trainer0] step   4  loss" in out.stdout and "[trainer1] step   4  loss" in out.stdout
    assert "OK: 2 pservers + 2 trainers" in out.stdout


def test_ctr_dist_example_trains_with_the_table_on_the_pservers():
    out = subprocess.run([sys.executable, "examples/ctr_dist.py", "--async", "--steps", "30", "--table-height",
                          "100001", "--hidden", "64,32", "--log-every", "10"], cwd=REPO,
                         env=base_env(TORCH_CPP_LOG_LEVEL="ERROR"), capture_output=True, text=True, timeout=150)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert "[trainer0] step   29  loss" in out.stdout and "[trainer1] step   29  loss" in out.stdout
    assert "table shard ready" in out.stdout
    # every step prefetched from both pservers and pushed rows
    assert "60 prefetch calls" in out.stdout and "OK: 2 pservers + 2 trainers" in out.stdout
