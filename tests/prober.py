"""What a port scanner or a curious process does to a job's ports, for the dist tests and the stress script
(tools/stress_jobs.py): connect-and-close, garbage, half-open, slow, a crowd at once, a gadget pickle.

    loop = ProbeLoop(lambda: [p.popen.pid for p in procs], marker=path)
    loop.start(); ...; loop.stop()      # loop.counts: {kind: probes made}, loop.ports: every port hit

The loop finds each process's listening TCP ports in /proc (so listeners that appear mid-start, such as
gloo's, are hit as soon as they exist) plus any `extra` endpoints given (hit before anything listens there).
"""

import collections
import os
import random
import socket
import threading
import time

KINDS = ("close", "garbage", "half_open", "slow", "crowd", "pickle")


def _inodes_of(pid):
    out = set()
    fd_dir = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return out
    for fd in fds:
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(target[len("socket:["):-1])
    return out


def listening(pid):
    """[(address, port)] of the IPv4 TCP sockets `pid` listens on."""
    inodes = _inodes_of(pid)
    found = []
    try:
        with open("/proc/net/tcp") as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[3] == "0A" and cols[9] in inodes:
                    addr, port = cols[1].split(":")
                    found.append((".".join(str(b) for b in reversed(bytes.fromhex(addr))), int(port, 16)))
    except OSError:
        pass
    return found


def _gadget(marker):
    import pickle

    class _Evil:
        def __reduce__(self):
            return os.system, ("touch %s" % marker,)
    return pickle.dumps(_Evil())


def probe(host, port, kind, marker="/nonexistent/marker", hold=2.0):
    """One probe of `kind`; returns the local address it used (None if it could not connect)."""
    socks = []
    try:
        n = 100 if kind == "crowd" else 1
        for _ in range(n):
            try:
                socks.append(socket.create_connection((host, port), timeout=2))
            except OSError:
                break
        if not socks:
            return None
        s = socks[0]
        me = "%s:%d" % s.getsockname()[:2]
        if kind == "garbage":
            s.sendall(b"GET / HTTP/1.0\r\n\r\n" + os.urandom(300))
            time.sleep(0.2)
        elif kind == "pickle":
            s.sendall(_gadget(marker))
            time.sleep(0.2)
        elif kind == "half_open":
            time.sleep(hold)
        elif kind == "slow":
            end = time.monotonic() + hold
            while time.monotonic() < end:
                s.sendall(bytes([random.randrange(256)]))
                time.sleep(0.5)
        elif kind == "crowd":
            time.sleep(0.5)
        return me
    except OSError:
        return None
    finally:
        for s in socks:
            try:
                s.close()
            except OSError:
                pass


class ProbeLoop(threading.Thread):
    def __init__(self, pids, kinds=KINDS, extra=(), period=0.5, marker="/nonexistent/marker", hold=2.0,
                 max_threads=12):
        super().__init__(daemon=True, name="probe-loop")
        self.pids, self.kinds, self.extra = pids, tuple(kinds), list(extra)
        self.period, self.marker, self.hold = period, marker, hold
        self.sem = threading.BoundedSemaphore(max_threads)
        self.halt = threading.Event()
        self.counts = collections.Counter()
        self.ports = set()
        self.sent = []             # (host, port, kind, local address)
        self.lock = threading.Lock()
        self.threads = []

    def targets(self):
        out = set()
        for ep in self.extra:
            host, _, port = ep.rpartition(":")
            out.add((host, int(port)))
        for pid in self.pids():
            out.update(listening(pid))
        return sorted(out)

    def _one(self, host, port, kind):
        try:
            me = probe(host, port, kind, self.marker, self.hold)
            with self.lock:
                self.counts[kind] += 1
                if me is not None:
                    self.ports.add((host, port))
                    self.sent.append((host, port, kind, me))
        finally:
            self.sem.release()

    def run(self):
        i = 0
        while not self.halt.is_set():
            for host, port in self.targets():
                kind = self.kinds[i % len(self.kinds)]
                i += 1
                if not self.sem.acquire(timeout=0.1):
                    continue
                t = threading.Thread(target=self._one, args=(host, port, kind), daemon=True)
                t.start()
                self.threads.append(t)
            self.halt.wait(self.period)

    def stop(self):
        self.halt.set()
        self.join(10)
        for t in self.threads:
            t.join(self.hold + 5)
        return dict(self.counts)
