"""Bytes that are not TensorPipe's protocol sent to a pserver's RPC listener with the RPC guard turned off
(PADDLE_COMPAT_RPC_GUARD=0: TensorPipe's port then accepts anything, as TensorPipe alone does): what happens
to the job, pinned down for the README's threat model. (With the guard, the default, nothing a stranger sends
reaches TensorPipe: test_rpc_guard.py.)

- a few bytes (less than TensorPipe's frame header) change nothing: the job trains to the end;
- a longer message (an HTTP request, random bytes) is read by TensorPipe as a frame of absurd length: it
  throws std::bad_alloc on its reactor thread and the pserver process aborts. No hang: the trainer names the
  lost pserver within seconds (its liveness watch fails), far inside FLAGS_rpc_deadline."""

import json
import os
import socket
import time

import pytest

from dist_utils import Cluster, base_env, endpoints
from test_bound_addresses import listening

pytestmark = [pytest.mark.dist, pytest.mark.timeout(240)]

SCRIPT = os.path.join("tests", "dist", "scripts", "ps_node.py")
SPEC = [{"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 40, "sleep": 0.2}]
DEADLINE_MS = 8000


def _env(eps, **kw):
    return base_env(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=1, FLAGS_rpc_deadline=DEADLINE_MS,
                    TORCH_CPP_LOG_LEVEL="ERROR", PADDLE_COMPAT_JOB_TOKEN="t", PADDLE_COMPAT_RPC_GUARD="0", **kw)


@pytest.mark.parametrize("payload", [b"\x00\x01\x02", b"GET / HTTP/1.0\r\n\r\n"], ids=["short", "http"])
def test_garbage_at_the_rpc_listener(tmp_path, payload):
    eps = endpoints(1)
    with Cluster(str(tmp_path)) as c:
        ps = c.start("ps0", [SCRIPT, json.dumps(SPEC)], _env(eps, TRAINING_ROLE="PSERVER",
                                                             PADDLE_CURRENT_ENDPOINT=eps[0]))
        tr = c.start("tr0", [SCRIPT, json.dumps(SPEC)], _env(eps, PADDLE_TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0))
        end = time.monotonic() + 90
        while "step 3 " not in tr.output and time.monotonic() < end and tr.popen.poll() is None:
            time.sleep(0.1)
        host, port = eps[0].rsplit(":", 1)
        rpc_ports = [p for a, p in listening(ps.popen.pid) if p != int(port) and a == host]
        assert rpc_ports, listening(ps.popen.pid)
        t0 = time.monotonic()
        socks = []
        for p in rpc_ports:
            s = socket.create_connection((host, p), timeout=2)
            s.sendall(payload)
            socks.append(s)
        rcs = c.wait(120)
        took = time.monotonic() - t0
        for s in socks:
            s.close()
        report = c.report()
    if len(payload) < 8:
        assert rcs == {"ps0": 0, "tr0": 0}, report
        return
    assert rcs["ps0"] != 0 and rcs["tr0"] != 0, report
    assert took < DEADLINE_MS / 1000.0, (took, report)
    assert "lost pserver 0 (%s)" % eps[0] in tr.output, report
