"""Strangers and a job: a process holding another PADDLE_COMPAT_JOB_TOKEN that starts as the job's trainer 0
is refused at the rendezvous gate (it fails naming the token; pserver 0 logs the refusal with the stranger's
socket address), and crafted pickles thrown at the job's rendezvous listener are refused the same way and run
nothing; the job's losses are those of the same job left alone."""

import json
import os
import pickle
import socket
import time

import pytest

from dist_utils import Cluster, base_env, endpoints
from test_bound_addresses import listening

pytestmark = [pytest.mark.dist, pytest.mark.timeout(240)]

SCRIPT = os.path.join("tests", "dist", "scripts", "ps_node.py")
SPEC = [{"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 8, "sleep": 0.3}]


class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, ("touch %s" % self.path,))


def _env(eps, token, **kw):
    return base_env(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=1, FLAGS_rpc_deadline=8000,
                    TORCH_CPP_LOG_LEVEL="ERROR", PADDLE_COMPAT_JOB_TOKEN=token, **kw)


def _job(tmp, stranger=False, marker=None):
    eps = endpoints(1)
    os.makedirs(str(tmp), exist_ok=True)
    with Cluster(str(tmp)) as c:
        ps = c.start("ps0", [SCRIPT, json.dumps(SPEC)],
                     _env(eps, "good", TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=eps[0]))
        tr = c.start("tr0", [SCRIPT, json.dumps(SPEC)], _env(eps, "good", PADDLE_TRAINING_ROLE="TRAINER",
                                                           PADDLE_TRAINER_ID=0))
        bad, mine = None, []
        if stranger:
            bad = c.start("stranger", [SCRIPT, json.dumps(SPEC)],
                          _env(eps, "wrong", PADDLE_TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0))
            end = time.monotonic() + 60
            while "loss" not in tr.output and time.monotonic() < end and tr.popen.poll() is None:
                time.sleep(0.1)
            # a crafted pickle thrown at the rendezvous gate (pserver 0's endpoint) is refused and runs nothing;
            # the store carries on. (TensorPipe's own RPC listeners are left out: what garbage does there is
            # test_tensorpipe_garbage.py's subject.)
            host, port = eps[0].rsplit(":", 1)
            assert (host, int(port)) in listening(ps.popen.pid)
            for _ in range(3):
                with socket.create_connection((host, int(port)), timeout=2) as s:
                    mine.append("%s:%d" % s.getsockname()[:2])
                    s.sendall(pickle.dumps(_Evil(marker)))
                    s.recv(100)
        rcs = c.wait(120)
        assert rcs["ps0"] == 0 and rcs["tr0"] == 0, "%s\n%s" % (rcs, c.report())
        losses = [json.loads(line[7:])["losses"] for line in tr.output.splitlines() if line.startswith("RESULT ")]
        if stranger:   # each refusal is logged with the peer's socket address
            for addr in mine:
                assert "refused a connection from %s: it did not answer the challenge" % addr in ps.output, \
                    c.report()
            assert ps.output.count("refused a connection from 127.0.0.1:") >= 4, c.report()
        return losses, (rcs.get("stranger"), bad.output if bad else "")


def test_stranger_and_crafted_pickles_change_nothing(tmp_path):
    alone, _ = _job(tmp_path / "alone")
    marker = str(tmp_path / "pwned")
    with_stranger, (rc, out) = _job(tmp_path / "stranger", stranger=True, marker=marker)
    assert with_stranger == alone and len(alone[0]) == 8
    assert not os.path.exists(marker)
    assert rc not in (0, None) and "refused this process: it does not hold the job's token" in out, out[-2000:]
