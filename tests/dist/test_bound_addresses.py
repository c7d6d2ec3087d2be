"""Every listener of a job binds the configured endpoint's address, never every interface: a 2-pserver +
2-trainer job's TCP listening sockets (the rendezvous store at pserver 0, the pserver endpoints, TensorPipe's
RPC listeners) are all on 127.0.0.1 while it trains."""

import os
import time

import pytest

from ps_cluster import start
from dist_utils import Cluster

pytestmark = [pytest.mark.dist, pytest.mark.timeout(180)]


def _inodes_of(pid):
    """Socket inodes held open by a process (Linux /proc)."""
    out = set()
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(target[len("socket:["):-1])
    return out


def _decode(addr_hex, v6):
    raw = bytes.fromhex(addr_hex)
    if not v6:
        return ".".join(str(b) for b in reversed(raw))
    words = [raw[i:i + 4][::-1] for i in range(0, 16, 4)]   # /proc prints each 32-bit word in host order
    full = b"".join(words)
    if full[:12] == b"\0" * 10 + b"\xff\xff":
        return ".".join(str(b) for b in full[12:])
    return ":".join(full[i:i + 2].hex() for i in range(0, 16, 2))


def listening(pid):
    """[(address, port)] of the TCP sockets `pid` listens on."""
    inodes = _inodes_of(pid)
    found = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        if not os.path.exists(table):
            continue
        with open(table) as f:
            next(f)
            for line in f:
                cols = line.split()
                local, state, inode = cols[1], cols[3], cols[9]
                if state == "0A" and inode in inodes:          # 0A: LISTEN
                    addr, port = local.split(":")
                    found.append((_decode(addr, v6), int(port, 16)))
    return found


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="needs Linux /proc to read listening sockets")
def test_every_listener_binds_the_endpoint_address_only(tmp_path):
    spec = {"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 40, "sleep": 0.2}
    with Cluster(str(tmp_path)) as c:
        eps, procs = start(c, [spec])
        seen = {}
        end = time.monotonic() + 90
        # wait until every trainer has trained a step: then all listeners of the job exist
        while time.monotonic() < end and not all("step" in procs[t].output or "loss" in procs[t].output
                                                  for t in ("tr0", "tr1")):
            time.sleep(0.2)
        for name, p in procs.items():
            assert p.popen.poll() is None, "%s ended early:\n%s" % (name, c.report())
            seen[name] = listening(p.popen.pid)
        rcs = c.wait(150)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
    ports = {int(ep.rsplit(":", 1)[1]) for ep in eps}
    assert ports <= {port for name in ("ps0", "ps1") for _, port in seen[name]}, seen
    for name, socks in seen.items():
        assert socks, "%s listens on nothing" % name
        wild = [s for s in socks if s[0] not in ("127.0.0.1",)]
        assert not wild, "%s listens beyond 127.0.0.1: %s" % (name, wild)
