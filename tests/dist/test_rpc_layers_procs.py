"""Hand-built RPC programs (layers.io ListenAndServ / Send / Recv) as real processes on 127.0.0.1: a
server started on port 0 (its port read from /tmp/paddle.<pid>.port, as Paddle's tests do) with two
clients over several rounds, and SIGINT stopping a server (its exe.run returns, as in Paddle)."""

import json
import os
import signal
import time

import pytest

from dist_utils import LOOPBACK, Cluster, base_env, free_ports

pytestmark = [pytest.mark.dist, pytest.mark.timeout(120)]
SCRIPT = os.path.join("tests", "dist", "scripts", "rpc_layers_node.py")
ENV = dict(FLAGS_rpc_deadline=30000, TORCH_CPP_LOG_LEVEL="ERROR")


def _started(pid):
    """When process `pid` started, in seconds since the epoch, to the second (Linux: /proc/<pid>/stat's start
    time after boot, plus /proc/stat's boot time)."""
    with open("/proc/%d/stat" % pid) as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/stat") as f:
        boot = next(int(line.split()[1]) for line in f if line.startswith("btime"))
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _written_since(path, t):
    try:
        return os.stat(path).st_mtime >= t
    except OSError:
        return False


def _wait_port_file(proc, timeout=30):
    """The port the server announced. A port file older than the server is not its own but a dead process's
    that had the same pid (a killed server leaves its file, Paddle's too): signalling the server on that one
    would find it before it handles signals."""
    path = "/tmp/paddle.%d.port" % proc.popen.pid
    born = _started(proc.popen.pid) - 1.0       # (boot time is whole seconds)
    end = time.monotonic() + timeout
    while not _written_since(path, born):
        assert proc.popen.poll() is None, "server exited before listening:\n" + proc.output
        assert time.monotonic() < end, "server wrote no %s within %ss:\n%s" % (path, timeout, proc.output)
        time.sleep(0.05)
    with open(path) as f:
        return path, int(f.read())


def test_port0_server_two_clients_three_rounds(tmp_path):
    rounds = 3
    with Cluster(tmp_path) as c:
        srv = c.start("server", [SCRIPT, "server", "%s:0" % LOOPBACK, "2"], base_env(**ENV))
        path, port = _wait_port_file(srv)
        ep = "%s:%d" % (LOOPBACK, port)
        clients = [c.start("client%d" % t, [SCRIPT, "client", ep, str(rounds)],
                           base_env(PADDLE_TRAINER_ID=t, PADDLE_TRAINERS_NUM=2, **ENV)) for t in range(2)]
        rcs = c.wait(90)
        assert rcs == {"server": 0, "client0": 0, "client1": 0}, c.report()
        # the server returns once both clients closed, having run one round per send
        assert "SERVED %d" % rounds in srv.output, c.report()
        assert not os.path.exists(path)
        for t, p in enumerate(clients):
            rec = json.loads([l for l in p.output.splitlines() if l.startswith("RESULT ")][0][7:])
            # round r: 10 * ((0 + r + .5) + (1 + r + .5)) + (r + 1) + 0.25
            assert rec["outs"] == pytest.approx([21.0 * r + 21.25 for r in range(rounds)], rel=1e-6), c.report()


def test_sigint_stops_server(tmp_path):
    ep = "%s:%d" % (LOOPBACK, free_ports(1)[0])
    with Cluster(tmp_path) as c:
        srv = c.start("server", [SCRIPT, "server", ep, "1"], base_env(**ENV))
        path, port = _wait_port_file(srv)
        assert "%s:%d" % (LOOPBACK, port) == ep
        os.kill(srv.popen.pid, signal.SIGINT)
        assert c.wait(30) == {"server": 0}, c.report()
        assert "SERVED 0" in srv.output, c.report()
        assert not os.path.exists(path)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_right_after_the_port_is_announced(tmp_path, sig):
    """The port is announced when exe.run begins, before the lowering; a SIGINT or SIGTERM at once, whatever
    the server is doing by then, stops it cleanly (one before it serves is remembered until it does)."""
    with Cluster(tmp_path) as c:
        srv = c.start("server", [SCRIPT, "server", "%s:0" % LOOPBACK, "1"], base_env(**ENV))
        path, _ = _wait_port_file(srv)
        os.kill(srv.popen.pid, sig)
        assert c.wait(60) == {"server": 0}, c.report()
        assert "SERVED 0" in srv.output, c.report()
        assert not os.path.exists(path)
