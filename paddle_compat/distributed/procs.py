"""Child processes of the launchers: start with an env, log to a file, watch, stop all if one fails; and the
free loopback ports the local jobs (examples, benchmarks, tools, tests) start their pservers on."""

import os
import signal
import socket
import subprocess
import sys
import time


class Child:
    def __init__(self, name, cmd, env, log_path):
        self.name = name
        self.log_path = log_path
        self._log = open(log_path, "ab") if log_path else None
        out = self._log if self._log is not None else None
        # own process group, so stopping a child also stops what it spawned
        self.proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT if out else None,
                                     start_new_session=True)

    @property
    def pid(self):
        return self.proc.pid

    def poll(self):
        return self.proc.poll()

    def stop(self, grace=5.0):
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self._log is not None:
            self._log.close()
            self._log = None

    def tail(self, n=20):
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-n:])


def python_cmd(script, args):
    return [sys.executable, "-u", script] + list(args)


def watch(children, must_finish, others_grace=None, poll=0.2):
    """Wait until every child in `must_finish` exits 0. If any child exits non-zero, stop all and return
    (False, that child). When `must_finish` is done, the rest get `others_grace` seconds to exit on their
    own (pservers leave once all trainers are done) and are then stopped. Returns (True, None) on success."""
    try:
        while True:
            for c in children:
                rc = c.poll()
                if rc is not None and rc != 0:
                    return False, c
            if all(c.poll() == 0 for c in must_finish):
                break
            time.sleep(poll)
        deadline = time.monotonic() + (others_grace if others_grace is not None else 0)
        rest = [c for c in children if c not in must_finish]
        while rest and time.monotonic() < deadline:
            for c in rest:
                rc = c.poll()
                if rc is not None and rc != 0:
                    return False, c
            if all(c.poll() is not None for c in rest):
                break
            time.sleep(poll)
        return True, None
    finally:
        for c in children:
            c.stop()


def report_failure(child, log_dir):
    where = (" (log: %s)" % child.log_path) if child.log_path else ""
    sys.stderr.write("launch: %s (pid %d) exited with code %s%s; stopped all other processes\n"
                     % (child.name, child.pid, child.poll(), where))
    tail = child.tail()
    if tail:
        sys.stderr.write("---- last lines of %s ----\n%s\n" % (child.name, tail))


def run_children(specs, script, script_args, log_dir, others_grace=None):
    """Start one child per (name, log file name, env, must_finish) and watch them (see `watch`); returns
    the launcher's exit code: 0, or 1 after stopping everything when a child failed."""
    if log_dir:
        os.makedirs(log_dir, exist_ok=True)
    children, must = [], []
    install_signal_handlers(children)
    for name, log_name, env, must_finish in specs:
        child = Child(name, python_cmd(script, script_args), env, os.path.join(log_dir, log_name) if log_dir else None)
        children.append(child)
        if must_finish:
            must.append(child)
    ok, failed = watch(children, must_finish=must, others_grace=others_grace)
    if not ok:
        report_failure(failed, log_dir)
        return 1
    return 0


def install_signal_handlers(children):
    def handler(signum, frame):
        for c in children:
            c.stop(grace=2.0)
        sys.exit(128 + signum)
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def free_ports(n, host="127.0.0.1"):
    """n distinct ports free on `host` right now (all held open together while they are picked, so none
    repeats)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind((host, 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()
