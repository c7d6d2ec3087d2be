"""Probes are harmless: from before the job's processes start until they exit, a probe loop (tests/prober.py)
hits every listener of the job, each found in /proc as soon as it listens, plus the configured endpoints
before anything listens there: connect-and-close, garbage (an HTTP request and random bytes), half-open
(connect, say nothing), slow (a byte every 0.5 s), a crowd of 100 connections at once, and a pickle that
would create a marker file. Listeners probed:

- pserver mode (2 pservers x 2 trainers, sync): each pserver's endpoint (trainers listen on nothing);
- collective mode (2 trainers, gloo): trainer 0's rendezvous store, and each trainer's gloo listener.

The jobs start, train to the losses of one process averaging the trainers' gradients (the undisturbed
result) and exit 0; the marker never appears; the wire listeners log the refusals with the probes' addresses.
gloo's listeners are not ours: unauthenticated, they read raw bytes and unpickle nothing; under these probes,
at start-up and mid-job, the gloo group formed and its collectives gave the right sums in every run here."""

import os
import re
import sys

import numpy as np
import pytest

import dp_reference
import paddle_compat as fluid
from dist_utils import Cluster, base_env, endpoints
from prober import KINDS, ProbeLoop
from ps_cluster import local_losses, results, start

pytestmark = [pytest.mark.dist, pytest.mark.timeout(400)]

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "scripts"))
import collective_trainer as T  # noqa: E402


def _check_probes(loop, outputs, wire_ports):
    counts = loop.stop()
    assert set(counts) == set(KINDS) and min(counts.values()) >= 3, counts
    # every wire listener logged probes with their addresses (a sample: rate limiting may drop some lines)
    text = "\n".join(outputs)
    logged = set(re.findall(r"refused a connection from (127\.0\.0\.1:\d+)", text))
    ours = {me for host, port, kind, me in loop.sent if port in wire_ports}
    assert logged & ours, (sorted(ours)[:5], sorted(logged)[:5])
    return counts


def test_pserver_job_under_probes(tmp_path):
    marker = str(tmp_path / "pwned")
    spec = {"model": "mlp", "opt": "sgd", "slice": True, "split": "rr", "steps": 20, "sleep": 0.3}
    eps = endpoints(2)
    with Cluster(tmp_path) as c:
        procs = {}
        loop = ProbeLoop(lambda: [p.popen.pid for p in procs.values()], extra=eps, period=0.3, marker=marker)
        loop.start()
        _, started = start(c, [spec], eps=eps, deadline_ms=60000)
        procs.update(started)
        rcs = c.wait(300)
        report = c.report()
        counts = _check_probes(loop, [p.output for p in procs.values()], {int(e.split(":")[1]) for e in eps})
    assert all(rc == 0 for rc in rcs.values()), report
    assert not os.path.exists(marker)
    assert {port for _, port in loop.ports} == {int(e.split(":")[1]) for e in eps}, loop.ports
    got = results(procs)
    want = local_losses(fluid, spec)
    for t in range(2):
        np.testing.assert_allclose(got[(0, t)], want[t], rtol=0, atol=1e-5)
    print("probes per kind: %s" % counts)


def test_collective_job_under_probes(tmp_path):
    marker = str(tmp_path / "pwned")
    steps = 25
    eps = endpoints(2)
    script = os.path.join(HERE, "scripts", "collective_trainer.py")
    with Cluster(tmp_path) as c:
        procs = []
        loop = ProbeLoop(lambda: [p.popen.pid for p in procs], extra=[eps[0]], period=0.2, marker=marker)
        loop.start()
        for t in (0, 1):
            procs.append(c.start("trainer%d" % t, [script, "--trainer_id", str(t), "--endpoints", ",".join(eps),
                                                   "--configs", "grad_allreduce", "--steps", str(steps), "--sleep",
                                                   "0.2", "--out", str(tmp_path)],
                                 base_env(FLAGS_rpc_deadline=60000)))
        rcs = c.wait(300)
        report = c.report()
        counts = _check_probes(loop, [p.output for p in procs], {int(eps[0].split(":")[1])})
    assert all(rc == 0 for rc in rcs.values()), report
    assert not os.path.exists(marker)
    # trainer 0's store and both gloo listeners were hit
    assert len(loop.ports) >= 3, loop.ports
    ref_losses, _ = dp_reference.averaged_sgd(T.build, lambda s: [T.feed(s, 0), T.feed(s, 1)], steps, 0.1)
    for t in (0, 1):
        got = np.load(str(tmp_path / ("grad_allreduce_%d.npz" % t)))["losses"]
        np.testing.assert_allclose(got, ref_losses[:, t], rtol=0, atol=1e-5)
    print("probes per kind: %s; ports %s" % (counts, sorted(loop.ports)))
