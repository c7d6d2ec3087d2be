"""A gate in front of a job's rendezvous store (torch TCPStore): only a process holding the job token gets
through, and every refusal is logged with the peer's socket address.

TCPStore itself accepts any connection and reads whatever keys it is sent. So the store listens on a
private loopback port of the process hosting it, and the job's endpoint is held by this gate:

    host:  gate at the endpoint  --accept-->  sends "PCG1" + 32-byte nonce
    peer:  answers HMAC-SHA256(job key, "store gate" + nonce)   (the job key is derived from the token)
    host:  checks it in constant time; a wrong answer (or a TCPStore, HTTP, ... speaking first) is refused,
           logged with the peer's address and closed before a byte reaches the store; a right one gets b"+"
           and the connection is piped to the store

The joining side opens that connection itself, answers the challenge, then hands it to its TCPStore client
through a one-shot listener on 127.0.0.1 (it accepts one connection, then closes). A connection that closes
before saying anything (a port probe, e.g. a trainer checking the endpoint is up) is not a refusal.

Both ends run in a small helper process (stdlib only, this file run as a script; it exits when its parent
does): torch calls the store from C++ while holding the GIL (TensorPipe's agent constructor waits on it), so
a pipe served by Python threads of the same process would deadlock.

Pserver mode and collective (nccl2 / gloo) mode both rendezvous through it.
"""

import hashlib
import hmac
import logging
import os
import socket
import subprocess
import sys
import threading

__all__ = ["serve", "connect", "GateRefused", "HANDSHAKE_S"]

_MAGIC = b"PCG1"
_OK = b"+"
HANDSHAKE_S = 10.0
_LOG = logging.getLogger("paddle_compat.rendezvous")
_refusals = []      # (peer address, reason), read by tests


class GateRefused(ConnectionError):
    """The rendezvous host refused this process: it does not hold the job's token."""


def _key():
    # the token's key, derived as the RPC signing key is (ps/auth.py, loaded by path: stdlib only)
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ps", "auth.py")
    spec = importlib.util.spec_from_file_location("_paddle_compat_auth", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.job_key()


def _answer(key, nonce):
    return hmac.new(key, b"store gate\0" + nonce, hashlib.sha256).digest()


def _recv_exact(sock, n, expect=None):
    """n bytes (fewer at EOF); with `expect`, stops as soon as what came differs from it."""
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            break
        buf += chunk
        if expect is not None and not expect.startswith(buf):
            break
    return buf


def _pipe(src, dst):
    try:
        while True:
            data = src.recv(1 << 16)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            try:
                s.shutdown(how)
            except OSError:
                pass


def _join(a, b):
    """Pipe a <-> b until both directions end, then close both."""
    def run():
        t = threading.Thread(target=_pipe, args=(b, a), daemon=True, name="store-gate-pipe")
        t.start()
        _pipe(a, b)
        t.join()
        a.close()
        b.close()
    threading.Thread(target=run, daemon=True, name="store-gate-pipe").start()


class Gate:
    """Serve the gate on `sock` (bound and listening at the job's endpoint) in front of the store at
    127.0.0.1:store_port. `what` names the store in logs ("pserver 0's rendezvous")."""

    def __init__(self, sock, store_port, what):
        self.sock, self.store_port, self.what = sock, int(store_port), what
        self.key = _key()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True, name="store-gate").start()

    def close(self):
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass

    def _accept(self):
        while not self.closed:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._admit, args=(conn, peer), daemon=True, name="store-gate-admit").start()

    def _admit(self, conn, peer):
        addr = "%s:%d" % peer[:2]
        err = None
        try:
            conn.settimeout(HANDSHAKE_S)
            nonce = os.urandom(32)
            want = _answer(self.key, nonce)
            conn.sendall(_MAGIC + nonce)
            # a stranger's first differing byte ends it (the nonce is fresh: nothing leaks across tries)
            got = _recv_exact(conn, 32, expect=want)
        except OSError as e:
            got, err = None, e
        if not got:
            if got is None and isinstance(err, socket.timeout):
                self._refuse(conn, addr, "it did not answer the token challenge within %.0fs" % HANDSHAKE_S)
            else:
                conn.close()   # closed without a word: a port probe
            return
        if len(got) != 32 or not hmac.compare_digest(got, want):
            self._refuse(conn, addr, "it did not answer the challenge with this job's token "
                                     "(PADDLE_COMPAT_JOB_TOKEN)")
            return
        try:
            conn.settimeout(None)
            conn.sendall(_OK)
            up = socket.create_connection(("127.0.0.1", self.store_port))
        except OSError as e:
            _LOG.warning("%s: could not pass %s through to the store: %s", self.what, addr, e)
            conn.close()
            return
        _join(conn, up)

    def _refuse(self, conn, addr, why):
        _refusals.append((addr, why))
        _LOG.warning("%s refused a connection from %s: %s", self.what, addr, why)
        conn.close()


_helpers = []      # the helper processes of this process (kept so their stdin pipes stay open)


def _spawn(args, pass_fds=()):
    p = subprocess.Popen([sys.executable, "-I", os.path.abspath(__file__)] + [str(a) for a in args],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=pass_fds, env=dict(os.environ))
    _helpers.append(p)
    return p


def _first_line(p, timeout, what):
    box = []
    t = threading.Thread(target=lambda: box.append(p.stdout.readline().decode().strip()), daemon=True)
    t.start()
    t.join(timeout)
    if not box or not box[0]:
        p.kill()
        raise ConnectionError("the %s helper did not answer within %.0fs" % (what, timeout))
    return box[0]


def serve(host, port, what, on_bound=None, front=None):
    """Hold the endpoint (host, port) with a gate (in a helper process) in front of a store listening on a
    private loopback port. Returns the store's listening socket: give its fd to TCPStore (master_listen_fd).
    OSError if the endpoint cannot be bound. on_bound(port) is called as soon as the endpoint listens (port 0
    picks one); connections made from then on wait in its backlog until the gate takes them. front: the
    endpoint's socket, already listening (bound earlier by the caller)."""
    back = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if front is None:
            front = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
            front.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            front.bind((host, port))
            front.listen(128)
        back.bind(("127.0.0.1", 0))
        back.listen(128)
    except OSError:
        if front is not None:
            front.close()
        back.close()
        raise
    if on_bound is not None:
        on_bound(front.getsockname()[1])
    p = _spawn(["serve", front.fileno(), back.getsockname()[1], what], pass_fds=(front.fileno(),))
    _first_line(p, 30, what)
    # the endpoint stays open here too (it shows as this process's listener); only the helper accepts
    _helpers.append(front)
    return back


def connect(host, port, timeout, what):
    """Pass the gate at host:port (in a helper process); returns a 127.0.0.1 port where this process's
    TCPStore client connects (one connection) to reach the store. GateRefused if our token is refused."""
    p = _spawn(["connect", host, port, timeout, what])
    line = _first_line(p, timeout + 5, what)
    kind, _, rest = line.partition(" ")
    if kind == "PORT":
        return int(rest)
    p.wait()
    if kind == "REFUSED":
        raise GateRefused(rest)
    raise ConnectionError(rest or line)


def _connect_here(host, port, timeout, what):
    import time
    end = time.monotonic() + timeout
    while True:     # the host may not listen yet (processes start in any order): retry until the deadline
        try:
            up = socket.create_connection((host, port), timeout=max(end - time.monotonic(), 0.1))
            break
        except OSError:
            if time.monotonic() >= end:
                raise
            time.sleep(0.05)
    try:
        up.settimeout(timeout)
        head = _recv_exact(up, len(_MAGIC) + 32)
        if len(head) != len(_MAGIC) + 32 or not head.startswith(_MAGIC):
            raise GateRefused("%s at %s:%d did not greet with its token challenge: is it a process of this "
                              "job (and of this version)?" % (what, host, port))
        up.sendall(_answer(_key(), head[len(_MAGIC):]))
        if _recv_exact(up, 1) != _OK:
            raise GateRefused("%s at %s:%d refused this process: it does not hold the job's token "
                              "(PADDLE_COMPAT_JOB_TOKEN must be the same in every process of the job)"
                              % (what, host, port))
        up.settimeout(None)
    except BaseException:
        up.close()
        raise
    return up


def _main(argv):
    mode = argv[0]
    logging.basicConfig(format="%(message)s")
    threading.Thread(target=lambda: (sys.stdin.buffer.read(), os._exit(0)), daemon=True).start()
    if mode == "serve":
        fd, store_port, what = int(argv[1]), int(argv[2]), argv[3]
        sock = socket.socket(fileno=fd)
        Gate(sock, store_port, what)
        print("READY", flush=True)
        threading.Event().wait()
    host, port, timeout, what = argv[1], int(argv[2]), float(argv[3]), argv[4]
    try:
        up = _connect_here(host, port, timeout, what)
    except GateRefused as e:
        print("REFUSED %s" % e, flush=True)
        return
    except OSError as e:
        print("ERROR %s could not reach %s at %s:%d: %s" % (what, what, host, port, e), flush=True)
        return
    local = socket.socket()
    local.bind(("127.0.0.1", 0))
    local.listen(1)
    local.settimeout(timeout)
    print("PORT %d" % local.getsockname()[1], flush=True)
    try:
        conn, _ = local.accept()
    except OSError:
        return
    finally:
        local.close()
    t = threading.Thread(target=_pipe, args=(up, conn), daemon=True)
    t.start()
    _pipe(conn, up)
    t.join()


if __name__ == "__main__":
    _main(sys.argv[1:])
