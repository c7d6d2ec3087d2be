"""Elastic pserver jobs (async, half-async, Geo-SGD): trainers come and go, the pservers serve whoever is there.

2 pservers, async: trainer 1 starts 10 s after the rest, trainer 0 is killed -9 mid-run and started again
with the same id; the pservers log the vanished trainer, take it back, and end when the last trainer has
finished; every loss is finite and training goes on (the restarted trainer starts from the trained
parameters, and losses fall). Paddle 1.8.5's test_communicator_half_async starts 1 of the 2 trainers it
configures: with one trainer alone, a half-async job trains and the trainer exits."""

import json
import signal
import time

import numpy as np
import pytest

from dist_utils import Cluster, base_env
from ps_cluster import SCRIPT, records, start, wait_for

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]


def _losses(proc):
    return [float(line.split()[3]) for line in proc.output.splitlines() if line.startswith("step ")]


def test_late_join_kill_and_rejoin(tmp_path):
    spec = {"model": "fit_a_line", "opt": "sgd", "lr": 0.01, "sync": False, "steps": 80, "sleep": 0.1}
    with Cluster(tmp_path) as c:
        # trainer 0's first run would go on for minutes: it is killed long before
        eps, procs = start(c, [dict(spec, steps=5000)], deadline_ms=30000, only=("ps0", "ps1", "tr0"))
        time.sleep(10.0)                                       # trainer 1 comes 10 s late
        assert procs["tr0"].popen.poll() is None, c.report()
        common = dict(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=2, FLAGS_rpc_deadline=30000)
        tr1 = c.start("tr1", [SCRIPT, json.dumps([spec])],
                      base_env(PADDLE_TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=1, **common))
        assert wait_for(tr1, "step 5 ", 120), c.report()
        first_run = _losses(procs["tr0"])
        assert procs["tr0"].popen.poll() is None, "trainer 0 finished before it could be killed:\n" + c.report()
        c.kill(procs["tr0"], signal.SIGKILL)                   # mid-run, no Executor.close()
        procs["tr0"].popen.wait(10)
        for ps in ("ps0", "ps1"):
            assert wait_for(procs[ps], "trainer 0 (127.0.0.1:", 30)
        again = c.start("tr0-again", [SCRIPT, json.dumps([spec])],
                        base_env(PADDLE_TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0, **common))
        rcs = c.wait(200, [again, tr1])
        assert rcs == {"tr0-again": 0, "tr1": 0}, c.report()
        last_exit = time.monotonic()
        rcs = c.wait(60, [procs["ps0"], procs["ps1"]])       # the pservers end once the last trainer finished
        report = c.report()
        assert rcs == {"ps0": 0, "ps1": 0}, report
        assert time.monotonic() - last_exit < 30, report
    for ps in ("ps0", "ps1"):
        out = procs[ps].output
        assert "trainer 0 (127.0.0.1:" in out and ("vanished: connection closed without Executor.close(); serving the "
                                                   "others; it may rejoin with the same id") in out, report
        assert "is back" in out, report
        assert "SERVED job 0" in out, report
    second_run = records({"tr0": again})[(0, 0)]["losses"]
    losses1 = records({"tr1": tr1})[(0, 1)]["losses"]
    assert len(second_run) == 80 and len(losses1) == 80
    print("first run of trainer 0: %d steps, %s .. %s" % (len(first_run), first_run[:3], first_run[-3:]))
    print("trainer 0 again: %s .. %s" % (second_run[:3], second_run[-3:]))
    print("trainer 1: %s .. %s" % (losses1[:3], losses1[-3:]))
    for ls in (first_run, second_run, losses1):
        assert np.isfinite(ls).all(), ls
    # training went on: the restarted trainer starts from trained parameters, and losses fall
    assert np.mean(second_run[:5]) < np.mean(first_run[:3]), (first_run[:5], second_run[:5])
    assert np.mean(losses1[-10:]) < np.mean(losses1[:5]), losses1
    assert np.mean(second_run[-10:]) < np.mean(first_run[:3]), (first_run[:5], second_run[-10:])


def test_a_trainer_that_vanishes_for_good_is_named_after_the_deadline(tmp_path):
    """Elastic, but not forever: trainer 1 is killed and never returns; once nobody is connected the pservers
    wait FLAGS_rpc_deadline, then end with an error naming it."""
    spec = {"model": "fit_a_line", "sync": False, "steps": 200, "sleep": 0.05, "die_at": 3}
    with Cluster(tmp_path) as c:
        _, procs = start(c, [dict(spec)], deadline_ms=4000, only=("ps0", "ps1", "tr1"))
        rcs = c.wait(120)
        report = c.report()
    assert rcs["tr1"] == -signal.SIGKILL or rcs["tr1"] != 0, report
    for ps in ("ps0", "ps1"):
        assert rcs[ps] != 0, report
        out = procs[ps].output
        assert "trainer 1 (127.0.0.1:" in out and "vanished" in out, report
        assert ("no trainer connected for 4s (FLAGS_rpc_deadline) while trainer(s) [0, 1] have not finished: "
                "trainer 0 never connected; trainer 1 left: its process died") in out, report
