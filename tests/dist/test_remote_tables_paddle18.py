"""Hand-built servers used as stores give Paddle 1.8.5's results (tests/dist/scripts/remote_table_node.py,
recorded by tests/data/paddle18/make_remote_tables.py into remote_tables.json): lookup_table with
remote_prefetch against one server and two (rows by block offset; the ids' LoD kept), nce with remote_prefetch
(rows by class id) and save_persistables of a program whose table is sliced over both (recv_save), loaded back
whole and with seek. The servers are started on port 0 and read their port from /tmp/paddle.<pid>.port."""

import json
import os
import signal
import time

import pytest

from dist_utils import REPO, Cluster, base_env
from nested_close import nested_close  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.timeout(180)]
SCRIPT = os.path.join("tests", "dist", "scripts", "remote_table_node.py")
WANT = json.load(open(os.path.join(REPO, "tests", "data", "paddle18", "remote_tables.json")))
ENV = dict(FLAGS_rpc_deadline=60000, TORCH_CPP_LOG_LEVEL="ERROR")
ROWS0 = 5


def _port(proc, timeout=60):
    path = "/tmp/paddle.%d.port" % proc.popen.pid
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        assert proc.popen.poll() is None, "server exited before listening:\n" + proc.output
        assert time.monotonic() < end, "server wrote no %s within %ss:\n%s" % (path, timeout, proc.output)
        time.sleep(0.05)
    with open(path) as f:
        return int(f.read())


def _close(a, b):
    return nested_close(a, b, rtol=1e-5, atol=1e-6)


def test_remote_tables_match_paddle18(tmp_path):
    with Cluster(tmp_path) as c:
        servers = [c.start("server%d" % i, [SCRIPT, "server", str(i), str(ROWS0 * (i + 1))], base_env(**ENV))
                   for i in range(2)]
        eps = ["127.0.0.1:%d" % _port(s) for s in servers]
        client = c.start("client", [SCRIPT, "client", eps[0], eps[1], str(ROWS0), str(tmp_path / "ckpt")],
                         base_env(**ENV))
        assert c.wait(120, [client]) == {"client": 0}, c.report()
        for s in servers:     # readers came and went: the servers still serve, until SIGINT stops them
            assert s.popen.poll() is None, c.report()
            os.kill(s.popen.pid, signal.SIGINT)
        assert c.wait(60, servers) == {"server0": 0, "server1": 0}, c.report()
        got = json.loads([l for l in client.output.splitlines() if l.startswith("RESULT ")][0][len("RESULT "):])
    for case in sorted(WANT):
        assert _close(got[case], WANT[case]), (case, got[case], WANT[case])
