"""A stranger at every listener of a pserver (the rendezvous gate, TensorPipe's RPC listener, the RPC guard's
claim listener, and the rendezvous store's private loopback port), sending garbage and a crafted pickle:
nothing it sends is processed (TensorPipe does not abort on it, the store's socket filter drops its bytes,
the pickle runs nothing), each connection is refused and logged with the stranger's socket address, and the
job's losses are those of the same job left alone."""

import json
import os
import pickle
import socket
import time

import pytest

from dist_utils import Cluster, base_env, endpoints
from test_bound_addresses import _inodes_of, listening

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]

SCRIPT = os.path.join("tests", "dist", "scripts", "ps_node.py")
# long enough that the job still runs when the guard refuses the silent connections (CLAIM_S = 10 s)
SPEC = [{"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 70, "sleep": 0.25}]


class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, ("touch %s" % self.path,))


def _env(eps, **kw):
    return base_env(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=1, FLAGS_rpc_deadline=8000,
                    TORCH_CPP_LOG_LEVEL="ERROR", PADDLE_COMPAT_JOB_TOKEN="good", **kw)


def _store_port(pid, ports):
    """The rendezvous store's private port: the one of `ports` that the gate helper (a child process of
    pserver 0) is connected to."""
    kids = set()
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
            kids.update(int(k) for k in f.read().split())
    inodes = set()
    for k in kids:
        inodes |= _inodes_of(k)
    with open("/proc/net/tcp") as f:
        next(f)
        remote = {int(c[2].split(":")[1], 16) for c in (line.split() for line in f) if c[9] in inodes}
    found = [p for p in ports if p in remote]
    assert len(found) == 1, (found, ports)
    return found[0]


def _job(tmp, marker=None):
    eps = endpoints(1)
    os.makedirs(str(tmp), exist_ok=True)
    with Cluster(str(tmp)) as c:
        ps = c.start("ps0", [SCRIPT, json.dumps(SPEC)], _env(eps, TRAINING_ROLE="PSERVER",
                                                             PADDLE_CURRENT_ENDPOINT=eps[0]))
        tr = c.start("tr0", [SCRIPT, json.dumps(SPEC)], _env(eps, PADDLE_TRAINING_ROLE="TRAINER",
                                                             PADDLE_TRAINER_ID=0))
        sent = []     # (port, the stranger's socket address)
        socks = []
        if marker:
            end = time.monotonic() + 90
            while "step 3 " not in tr.output and time.monotonic() < end and tr.popen.poll() is None:
                time.sleep(0.1)
            host = eps[0].rsplit(":", 1)[0]
            ports = sorted(p for a, p in listening(ps.popen.pid) if a == host)
            assert len(ports) == 4, ports      # endpoint (gate), store, TensorPipe, guard's claim listener
            store = _store_port(ps.popen.pid, ports)
            for p in ports:
                for payload in (b"GET / HTTP/1.0\r\n\r\n" + os.urandom(200), pickle.dumps(_Evil(marker))):
                    s = socket.create_connection((host, p), timeout=2)
                    s.sendall(payload)
                    sent.append((p, "%s:%d" % s.getsockname()[:2]))
                    socks.append(s)
        rcs = c.wait(150)
        for s in socks:
            s.close()
        report = c.report()
        assert rcs == {"ps0": 0, "tr0": 0}, report
        losses = [json.loads(line[7:])["losses"] for line in tr.output.splitlines() if line.startswith("RESULT ")]
        for p, addr in sent:
            assert "refused a connection from %s:" % addr in ps.output, (p, p == store, addr, report)
        return losses


def test_stranger_at_every_pserver_listener_changes_nothing(tmp_path):
    marker = str(tmp_path / "pwned")
    attacked = _job(tmp_path / "stranger", marker=marker)
    alone = _job(tmp_path / "alone")
    assert attacked == alone and len(alone[0]) == SPEC[0]["steps"]
    assert not os.path.exists(marker)
