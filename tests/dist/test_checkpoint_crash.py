"""Job-level crash-safe checkpoints: kill -9 a pserver, or trainer 0, in the middle of a distributed
save_persistables (made deterministic by a test-only pause between parts); the previous checkpoint is left
whole, a fresh job resumed from it reproduces the uninterrupted run's losses, and the interrupted save's
staging directory is refused by name of its missing parts."""

import json
import os
import signal

import numpy as np
import pytest

from dist_utils import Cluster
from ps_cluster import run_ok, start

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]

SPEC = {"model": "mlp", "opt": "adam", "slice": True, "split": "rr", "lr_decay": True, "steps": 6}


def _wait_file(proc, path, timeout):
    import time
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        if proc.popen.poll() is not None:
            return os.path.exists(path)
        time.sleep(0.05)
    return False


def _interrupted_save(tmp_path, victim, point):
    """Save after steps 3 and 5 into one directory; `victim` pauses in the second save at `point` and is
    killed there. Returns the checkpoint directory."""
    from paddle_compat.backends.checkpoint_dir import PAUSE_ENV
    ck = str(tmp_path / "ckpt")
    flags = tmp_path / "flags"
    flags.mkdir()
    with Cluster(tmp_path / "cut") as c:
        os.makedirs(c.tmpdir, exist_ok=True)
        _, procs = start(c, [dict(SPEC, save_dir=ck, save_at=[3, 5])], deadline_ms=30000,
                         env_for={victim: {PAUSE_ENV: "%s:2:%s" % (point, flags)}})
        paused = str(flags / (point + ".paused"))
        assert _wait_file(procs[victim], paused, 120), c.report()
        with open(os.path.join(ck, "__checkpoint__.json")) as f:
            first = json.load(f)
        staging = [p for p in os.listdir(str(tmp_path)) if p.startswith("ckpt.tmp-")]
        assert len(staging) == 1, (os.listdir(str(tmp_path)), c.report())
        c.kill(procs[victim], signal.SIGKILL)
        rcs = c.wait(60)
        assert all(rc != 0 for rc in rcs.values()), c.report()
    # the previous checkpoint is untouched: the same manifest, every file present
    from paddle_compat.backends.checkpoint_dir import IncompleteCheckpoint, verify
    assert verify(ck) == first
    # the interrupted save is refused, naming the parts it never confirmed
    with pytest.raises(IncompleteCheckpoint, match="incomplete checkpoint.*fc_0.w_0_moment1_0"):
        verify(str(tmp_path / staging[0]))
    return ck


def _check_resume(tmp_path, ck):
    full = run_ok(tmp_path / "full", [SPEC])
    resumed = run_ok(tmp_path / "resumed", [dict(SPEC, start=3, load_dir=ck)])
    for t in range(2):
        np.testing.assert_allclose(resumed[(0, t)], full[(0, t)][3:], rtol=0, atol=1e-6)


def test_pserver_killed_mid_save_leaves_the_previous_checkpoint(tmp_path):
    ck = _interrupted_save(tmp_path, "ps1", "pserver-pull-state")
    _check_resume(tmp_path, ck)


def test_trainer0_killed_mid_save_leaves_the_previous_checkpoint(tmp_path):
    ck = _interrupted_save(tmp_path, "tr0", "trainer-save-part")
    _check_resume(tmp_path, ck)


def test_pservers_refuse_an_interrupted_save(tmp_path):
    """fleet.init_server / load_persistables on the pservers of a new job: the staging directory of an
    interrupted save is refused, every pserver naming the parts that were never confirmed."""
    from paddle_compat.backends.checkpoint_dir import Staging
    st = Staging(str(tmp_path / "ckpt"), {"fc_0.w_0": "trainer 0, pulled from pserver 0 (x)"})
    with Cluster(tmp_path / "run") as c:
        os.makedirs(c.tmpdir, exist_ok=True)
        _, procs = start(c, [dict(SPEC, steps=2, load_dir=st.path)], deadline_ms=10000)
        rcs = c.wait(90)
        assert rcs["ps0"] != 0 and rcs["ps1"] != 0, c.report()
        for ps in ("ps0", "ps1"):
            assert "is an incomplete checkpoint" in procs[ps].output, c.report()
            assert "fc_0.w_0 (trainer 0, pulled from pserver 0 (x))" in procs[ps].output, c.report()
