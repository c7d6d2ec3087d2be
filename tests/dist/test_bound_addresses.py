"""Every listener of a job binds exactly the configured endpoint's address (no interface lookup, so secondary
addresses such as 127.0.0.2 work): read from each process's listening sockets in /proc while the job trains.

- pserver mode, pservers on 127.0.0.2 and 127.0.0.3: each pserver listens on its endpoint and nowhere else;
  trainers listen on nothing (they connect);
- collective mode, trainers on 127.0.0.2 and 127.0.0.3: trainer 0 listens on its endpoint (the rendezvous
  store) and gloo's listeners are on each trainer's own address."""

import os
import time

import pytest

from dist_utils import Cluster, base_env, free_ports
from prober import listening
from ps_cluster import start

pytestmark = [pytest.mark.dist, pytest.mark.timeout(240),
              pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="needs Linux /proc")]

HERE = os.path.dirname(os.path.abspath(__file__))


def _until_all_train(c, procs, names, marker):
    end = time.monotonic() + 120
    while time.monotonic() < end and not all(marker in procs[n].output for n in names):
        for n in names:
            assert procs[n].popen.poll() is None, "%s ended early:\n%s" % (n, c.report())
        time.sleep(0.2)


def test_pserver_mode_on_secondary_addresses(tmp_path):
    eps = ["127.0.0.2:%d" % free_ports(1)[0], "127.0.0.3:%d" % free_ports(1)[0]]
    spec = {"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 30, "sleep": 0.2}
    with Cluster(str(tmp_path)) as c:
        _, procs = start(c, [spec], eps=eps)
        _until_all_train(c, procs, ("tr0", "tr1"), "step 2 ")
        seen = {name: sorted(listening(p.popen.pid)) for name, p in procs.items()}
        rcs = c.wait(150)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
    assert seen["ps0"] == [("127.0.0.2", int(eps[0].split(":")[1]))], seen
    assert seen["ps1"] == [("127.0.0.3", int(eps[1].split(":")[1]))], seen
    assert seen["tr0"] == [] and seen["tr1"] == [], seen


def test_collective_mode_on_secondary_addresses(tmp_path):
    eps = ["127.0.0.2:%d" % free_ports(1)[0], "127.0.0.3:%d" % free_ports(1)[0]]
    script = os.path.join(HERE, "scripts", "collective_trainer.py")
    with Cluster(str(tmp_path)) as c:
        procs = {"t%d" % t: c.start("t%d" % t, [script, "--trainer_id", str(t), "--endpoints", ",".join(eps),
                                                "--configs", "grad_allreduce", "--steps", "20", "--sleep", "0.2",
                                                "--out", str(tmp_path)], base_env(FLAGS_rpc_deadline=60000))
                 for t in (0, 1)}
        _until_all_train(c, procs, ("t0", "t1"), "step 2\n")
        seen = {name: sorted(listening(p.popen.pid)) for name, p in procs.items()}
        rcs = c.wait(150)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
    store = ("127.0.0.2", int(eps[0].split(":")[1]))
    assert store in seen["t0"], seen
    assert {a for a, _ in seen["t0"]} == {"127.0.0.2"} and len(seen["t0"]) == 2, seen    # the store and gloo's
    assert {a for a, _ in seen["t1"]} == {"127.0.0.3"} and len(seen["t1"]) == 1, seen    # gloo's
