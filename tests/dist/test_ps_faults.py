"""Pserver mode never hangs: a killed trainer, a killed pserver, a pserver that never starts and a trainer
that stalls at the sync barrier each end every other process with an error naming who was lost, in
bounded time (death is detected through the RPC connection, well under FLAGS_rpc_deadline)."""

import signal
import time

import pytest

from dist_utils import Cluster
from ps_cluster import start, wait_for

pytestmark = [pytest.mark.dist, pytest.mark.timeout(180)]

DEADLINE_MS = 30000   # detection must come well before it: the asserts allow half


def _exit_all(c, procs, names, timeout):
    t0 = time.monotonic()
    rcs = c.wait(timeout, [procs[n] for n in names])
    return rcs, time.monotonic() - t0


def test_killed_trainer(tmp_path):
    spec = {"model": "mlp", "steps": 200, "die_at": 3, "sleep": 0.05}
    with Cluster(tmp_path) as c:
        _, procs = start(c, [spec], deadline_ms=DEADLINE_MS)
        c.wait(60, [procs["tr1"]])                      # trainer 1 SIGKILLs itself at step 3
        rcs, took = _exit_all(c, procs, ["ps0", "ps1", "tr0"], 60)
        report = c.report()
        assert all(rc != 0 for rc in rcs.values()), report
        assert took < DEADLINE_MS / 1000.0 * 0.5, (took, report)
        for ps in ("ps0", "ps1"):
            assert "lost trainer 1" in procs[ps].output, report
        assert "lost trainer 1" in procs["tr0"].output, report


def test_killed_pserver(tmp_path):
    spec = {"model": "mlp", "steps": 400, "sleep": 0.05}
    with Cluster(tmp_path) as c:
        eps, procs = start(c, [spec], deadline_ms=DEADLINE_MS)
        assert wait_for(procs["tr0"], "step 3 ", 90), c.report()
        c.kill(procs["ps1"], signal.SIGKILL)
        rcs, took = _exit_all(c, procs, ["ps0", "tr0", "tr1"], 60)
        report = c.report()
        assert all(rc != 0 for rc in rcs.values()), report
        assert took < DEADLINE_MS / 1000.0 * 0.5, (took, report)
        for tr in ("tr0", "tr1"):
            out = procs[tr].output
            assert "pserver 1 (%s)" % eps[1] in out or "pserver %s" % eps[1] in out, report
        # pserver 0 learns it from a trainer's abort ("trainer 1 failed: ... lost pserver 1") or its exit
        out = procs["ps0"].output
        assert ("failed" in out and eps[1] in out) or "lost trainer" in out, report


def test_pserver_never_started(tmp_path):
    spec = {"model": "fit_a_line", "steps": 3}
    with Cluster(tmp_path) as c:
        eps, procs = start(c, [spec], deadline_ms=5000, only=("ps0", "tr0", "tr1"))
        rcs, took = _exit_all(c, procs, ["ps0", "tr0", "tr1"], 60)
        report = c.report()
        assert all(rc != 0 for rc in rcs.values()), report
        assert took < 30, (took, report)
        for tr in ("tr0", "tr1"):
            assert "cannot reach pserver(s) %s" % eps[1] in procs[tr].output, report
        assert "never arrived" in procs["ps0"].output and "pserver 1 (%s)" % eps[1] in procs["ps0"].output, report


def test_trainer_stalling_at_the_barrier_hits_the_deadline_with_a_reason(tmp_path):
    spec = {"model": "fit_a_line", "steps": 4, "stall_at": 2, "stall": 30}
    with Cluster(tmp_path) as c:
        _, procs = start(c, [spec], deadline_ms=3000)
        rcs, took = _exit_all(c, procs, ["ps0", "ps1", "tr0"], 60)
        report = c.report()
        assert all(rc != 0 for rc in rcs.values()), report
        assert "trainer(s) [1] sent no gradients within 3s" in procs["tr0"].output, report
        assert "FLAGS_rpc_deadline" in procs["ps0"].output, report


def test_trainer_exception_fails_the_pservers_with_its_reason(tmp_path):
    spec = {"model": "fit_a_line", "steps": 6, "raise_at": 2}
    # `took` here includes the processes' start-up (imports, rendezvous), which alone can pass 15 s on a
    # loaded 2-core machine: a longer deadline keeps the check about the deadline, not about start-up speed.
    deadline_ms = 2 * DEADLINE_MS
    with Cluster(tmp_path) as c:
        _, procs = start(c, [spec], deadline_ms=deadline_ms)
        rcs, took = _exit_all(c, procs, ["ps0", "ps1", "tr0", "tr1"], 90)
        report = c.report()
        assert all(rc != 0 for rc in rcs.values()), report
        assert took < deadline_ms / 1000.0 * 0.5, (took, report)
        for name in ("ps0", "ps1", "tr0"):
            assert "trainer 1 failed: RuntimeError: trainer 1 breaks down on purpose" in procs[name].output, report
