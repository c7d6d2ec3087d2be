"""Spawning the 2-4 real processes of a dist test on 127.0.0.1: free ports, deadlines, cleanup by pid."""

import os
import signal
import socket
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOOPBACK = "127.0.0.1"


def free_ports(n):
    """n distinct ports free on 127.0.0.1 right now."""
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind((LOOPBACK, 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def free_consecutive_ports(n, tries=50):
    """A first port p such that p .. p+n-1 are all free on 127.0.0.1 now (for launchers taking a start port)."""
    for _ in range(tries):
        base = free_ports(1)[0]
        if base + n >= 65536:
            continue
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind((LOOPBACK, p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no %d consecutive free ports found" % n)


def endpoints(n):
    return ["%s:%d" % (LOOPBACK, p) for p in free_ports(n)]


def base_env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Proc:
    def __init__(self, name, popen, log_path):
        self.name, self.popen, self.log_path = name, popen, log_path

    @property
    def output(self):
        with open(self.log_path, "r", errors="replace") as f:
            return f.read()


class Cluster:
    """Start processes (each in its own process group); `wait` bounds them all by one deadline and
    `close` (also on exit from `with`) kills whatever is left, by pid."""

    def __init__(self, tmpdir):
        self.tmpdir = str(tmpdir)
        self.procs = []

    def start(self, name, args, env):
        log = os.path.join(self.tmpdir, "%s.log" % name)
        f = open(log, "wb")
        p = subprocess.Popen([sys.executable] + list(args), env=env, stdout=f, stderr=subprocess.STDOUT,
                             cwd=REPO, start_new_session=True)
        f.close()
        proc = Proc(name, p, log)
        self.procs.append(proc)
        return proc

    def wait(self, timeout, procs=None):
        """Wait for procs (default all) to exit within `timeout` seconds; returns {name: returncode}.
        On timeout every process is killed and AssertionError names the ones still running."""
        procs = procs or self.procs
        deadline = time.monotonic() + timeout
        for p in procs:
            left = deadline - time.monotonic()
            try:
                p.popen.wait(timeout=max(left, 0.01))
            except subprocess.TimeoutExpired:
                hung = [q.name for q in procs if q.popen.poll() is None]
                outputs = "\n".join("---- %s ----\n%s" % (q.name, q.output[-3000:]) for q in procs)
                self.close()
                raise AssertionError("processes still running after %ss: %s\n%s" % (timeout, hung, outputs))
        return {p.name: p.popen.returncode for p in procs}

    def kill(self, proc, sig=signal.SIGKILL):
        try:
            os.killpg(proc.popen.pid, sig)
        except ProcessLookupError:
            pass

    def close(self):
        for p in self.procs:
            if p.popen.poll() is None:
                self.kill(p)
        for p in self.procs:
            try:
                p.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def report(self):
        return "\n".join("---- %s (rc=%s) ----\n%s" % (p.name, p.popen.returncode, p.output[-4000:])
                         for p in self.procs)


def gpu_count():
    """CUDA devices torch sees here (0 without CUDA): the GPU tests skip on 0."""
    try:
        import torch
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:
        return 0
