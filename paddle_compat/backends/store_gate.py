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

The store's private port is guarded too (Linux socket filters): once the hosting process says its own store
client is connected (`store_started`), the helper attaches a classic BPF filter to the store's listening
socket that drops every segment carrying payload unless it comes from a source port the helper holds for one
of its own connections to the store (bound before the filter is updated, released after). A local process
that connects to the private port then gets its handshake but none of its bytes reach TCPStore; the helper
logs it with its address. `PADDLE_COMPAT_RPC_GUARD=0` turns this off with the RPC guard.
"""

import ctypes
import hashlib
import hmac
import logging
import os
import socket
import struct
import subprocess
import sys
import threading
import time

__all__ = ["serve", "connect", "GateRefused", "HANDSHAKE_S"]

_MAGIC = b"PCG1"
_OK = b"+"
HANDSHAKE_S = 10.0
_LOG = logging.getLogger("paddle_compat.rendezvous")
_refusals = []      # (peer address, reason), read by tests


# Classic BPF on a TCP socket sees each segment from its TCP header. (code, jt, jf, k) instructions.
SO_ATTACH_FILTER = 26
# A = segment length; X = A; A = TCP header length (data offset nibble * 4); accept when equal (no payload)
NO_PAYLOAD = [(0x80, 0, 0, 0), (0x07, 0, 0, 0), (0x30, 0, 0, 12), (0x54, 0, 0, 0xF0), (0x74, 0, 0, 2),
              (0x1D, 0, 1, 0), (0x06, 0, 0, 0xFFFFFFFF), (0x06, 0, 0, 0)]
_MAX_ALLOWED = 2000      # two instructions a port; the kernel takes programs of up to 4096


def attach_filter(sock, prog):
    """Attach a classic BPF program (a list of (code, jt, jf, k)) to sock; OSError if the kernel refuses."""
    buf = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    arr = ctypes.create_string_buffer(buf, len(buf))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, struct.pack("HL", len(prog), ctypes.addressof(arr)))


def ports_or_no_payload(ports):
    """A program passing every segment from one of `ports` (TCP source port) and, from any other port, only
    segments without payload (the handshake, ACKs, FIN)."""
    prog = [(0x28, 0, 0, 0)]                 # A = source port (ldh [0], network order)
    for p in sorted(ports):                  # equal: fall through to accept; else skip it
        prog += [(0x15, 0, 1, p), (0x06, 0, 0, 0xFFFFFFFF)]
    return prog + NO_PAYLOAD


GUARD_ENV = "PADDLE_COMPAT_RPC_GUARD"


def guard_enabled():
    return os.environ.get(GUARD_ENV, "1").strip().lower() not in ("0", "false", "off", "no")


class StoreFilter:
    """The helper's guard of the store's private port (see the module's docstring)."""

    def __init__(self, listener, store_port, what):
        self.listener, self.store_port, self.what = listener, int(store_port), what
        self.lock = threading.Lock()
        self.active = False
        self.allowed = set()     # source ports of our own connections to the store made while active
        self.known = set()       # remote ports of the store's connections seen when it became active
        self.logged = set()

    def activate(self):
        with self.lock:
            self.known = set(self._store_conns())
            attach_filter(self.listener, ports_or_no_payload(self.allowed))
            self.active = True
        threading.Thread(target=self._watch, daemon=True, name="store-port-watch").start()

    def connect(self):
        """A connection of ours to the store: while active, from a port the filter lets through."""
        with self.lock:
            if not self.active:
                return socket.create_connection(("127.0.0.1", self.store_port)), None
            if len(self.allowed) >= _MAX_ALLOWED:
                raise OSError("%d connections to the store are open at once (at most %d)"
                              % (len(self.allowed), _MAX_ALLOWED))
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            self.allowed.add(port)
            attach_filter(self.listener, ports_or_no_payload(self.allowed))
        try:
            s.connect(("127.0.0.1", self.store_port))
        except OSError:
            self.release(port, s)
            raise
        return s, port

    def release(self, port, sock):
        """Close our connection; its port leaves the filter first (while we still hold it, so nobody else
        can have bound it meanwhile)."""
        if port is not None:
            with self.lock:
                self.allowed.discard(port)
                try:
                    attach_filter(self.listener, ports_or_no_payload(self.allowed))
                except OSError:
                    pass
        sock.close()

    def _store_conns(self):
        """Remote ports of the established TCP connections to 127.0.0.1:store_port (Linux /proc)."""
        out = []
        local = "0100007F:%04X" % self.store_port
        try:
            with open("/proc/net/tcp") as f:
                next(f)
                for line in f:
                    c = line.split()
                    if c[1] == local and c[3] == "01":
                        out.append(int(c[2].split(":")[1], 16))
        except OSError:
            pass
        return out

    def _watch(self):
        while True:
            time.sleep(0.5)
            with self.lock:
                ok = self.allowed | self.known
            for port in self._store_conns():
                if port not in ok and port not in self.logged:
                    self.logged.add(port)
                    why = ("it connected to the store's private port, not through the gate; its bytes are "
                           "dropped")
                    _refusals.append(("127.0.0.1:%d" % port, why))
                    _LOG.warning("%s refused a connection from 127.0.0.1:%d: %s", self.what, port, why)


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


def _join(a, b, close_b=None):
    """Pipe a <-> b until both directions end, then close both (b through close_b(b) if given)."""
    def run():
        t = threading.Thread(target=_pipe, args=(b, a), daemon=True, name="store-gate-pipe")
        t.start()
        _pipe(a, b)
        t.join()
        a.close()
        (close_b or socket.socket.close)(b)
    threading.Thread(target=run, daemon=True, name="store-gate-pipe").start()


class Gate:
    """Serve the gate on `sock` (bound and listening at the job's endpoint) in front of the store at
    127.0.0.1:store_port. `what` names the store in logs ("pserver 0's rendezvous")."""

    def __init__(self, sock, store_port, what, store_filter=None):
        self.sock, self.store_port, self.what = sock, int(store_port), what
        self.filter = store_filter
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
            if self.filter is not None:
                up, port = self.filter.connect()
            else:
                up, port = socket.create_connection(("127.0.0.1", self.store_port)), None
        except OSError as e:
            _LOG.warning("%s: could not pass %s through to the store: %s", self.what, addr, e)
            conn.close()
            return
        release = (lambda s: self.filter.release(port, s)) if self.filter is not None else None
        _join(conn, up, close_b=release)

    def _refuse(self, conn, addr, why):
        _refusals.append((addr, why))
        _LOG.warning("%s refused a connection from %s: %s", self.what, addr, why)
        conn.close()


_helpers = []      # the helper processes of this process (kept so their stdin pipes stay open)
_served = {}       # store port -> the gate helper in front of it


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
    guard = guard_enabled()
    p = _spawn(["serve", front.fileno(), back.getsockname()[1], what, back.fileno() if guard else -1],
               pass_fds=(front.fileno(), back.fileno()) if guard else (front.fileno(),))
    _first_line(p, 30, what)
    if guard:
        _served[back.getsockname()[1]] = p
    # the endpoint stays open here too (it shows as this process's listener); only the helper accepts
    _helpers.append(front)
    return back


def store_started(store_port):
    """The hosting process's own TCPStore client is connected to the store at 127.0.0.1:store_port (what
    serve returned): from now on only the gate's connections get bytes through to it. RuntimeError naming
    the switch if the filter cannot be attached."""
    p = _served.pop(int(store_port), None)
    if p is None:           # the guard is off (PADDLE_COMPAT_RPC_GUARD=0)
        return
    try:
        p.stdin.write(b"STORE_UP\n")
        p.stdin.flush()
    except OSError:
        return
    try:
        line = _first_line(p, 30, "store port guard")
    except ConnectionError as e:
        line = str(e)
    if line != "GUARDED":
        raise RuntimeError("the rendezvous store's private port 127.0.0.1:%d could not be guarded (%s); set "
                           "PADDLE_COMPAT_RPC_GUARD=0 to run unguarded" % (int(store_port), line))


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
    if mode == "serve":
        fd, store_port, what, back_fd = int(argv[1]), int(argv[2]), argv[3], int(argv[4])
        sock = socket.socket(fileno=fd)
        store_filter = StoreFilter(socket.socket(fileno=back_fd), store_port, what) if back_fd >= 0 else None
        Gate(sock, store_port, what, store_filter)
        print("READY", flush=True)
        # the parent's lines: STORE_UP (its own store client is connected: guard the port); EOF: it is gone
        for line in sys.stdin.buffer:
            if line.strip() == b"STORE_UP" and store_filter is not None:
                try:
                    store_filter.activate()
                    print("GUARDED", flush=True)
                except OSError as e:
                    print("FAILED %s" % e, flush=True)
        os._exit(0)
    threading.Thread(target=lambda: (sys.stdin.buffer.read(), os._exit(0)), daemon=True).start()
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
