"""A guard on this process's TensorPipe listener: bytes from a connection reach TensorPipe only once a process
holding the job's token has claimed that connection as its own.

TensorPipe accepts any TCP connection and parses what arrives; bytes that are not its protocol make it throw
std::bad_alloc and abort the process. Its reactor is C++ we cannot wrap, and piping every tensor through a
proxy of ours would cost throughput, so the kernel does the gating:

- when TensorPipe publishes its listener's address (through the job's store, which we wrap), a classic BPF
  socket filter is attached to the listening socket: segments carrying payload are dropped, bare SYN/ACK/FIN
  pass. Accepted connections inherit it, so a new connection completes its handshake but nothing it sends
  reaches TensorPipe (its sender's TCP keeps retransmitting);
- every process runs a small claim listener (a port on its member address, published in the store) and
  watches its own sockets (/proc/self/fd, getpeername) for new connections to the job's RPC listeners. Each
  new one it claims at the listener's process: that process sends a fresh nonce, the claimant answers
  HMAC-SHA256(job key, nonce + the connection's addresses + its worker name); if it verifies, the filter is
  detached from that one accepted socket and TCP's next retransmission is delivered (a new connection costs
  about 0.2 s: TCP's minimum retransmission timeout);
- an accepted connection nobody claims within CLAIM_S is refused: logged with its socket address and shut
  down (TensorPipe sees a connection error on a pipe it never used). A wrong claim is refused the same way.

Linux only (SO_ATTACH_FILTER, /proc). PADDLE_COMPAT_RPC_GUARD=0 turns it off (the listener then accepts any
connection, as TensorPipe alone does).
"""

import hashlib
import hmac
import logging
import os
import re
import socket
import struct
import threading
import time

from . import auth
from .. import store_gate

__all__ = ["enabled", "Guard", "GuardedStore", "refusals", "CLAIM_S", "ENV"]

ENV = store_gate.GUARD_ENV
CLAIM_S = 10.0            # an accepted connection unclaimed this long is refused
_MAGIC = b"PCR1"
_LOG = logging.getLogger("paddle_compat.ps.rpc_guard")
_SO_DETACH_FILTER = 27
_refusals = []            # (peer address, reason), read by tests
_current = None           # this process's guard of the running RPC session


def enabled():
    return store_gate.guard_enabled()       # one switch for the RPC guard and the store port's filter


def refusals():
    return list(_refusals)


def addresses_of(worker):
    """The socket addresses of the connections this process's guard admitted for that worker name (it
    proved holding the job's token): RPC decoding sees message bytes only, this names where they came from."""
    g = _current
    if g is None or g.closed:
        return []
    with g._lock:
        return sorted(a for n, a in g.admitted_from.values() if n == worker)


# this process's sockets ----------------------------------------------------------------------------------
# (read from /proc/self/fd and the sockets themselves: /proc/net/tcp lists the whole machine's sockets and
# takes tens of ms to read on a busy host)
def _own_sockets():
    """{socket inode: fd} of this process."""
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            found[link[8:-1]] = int(fd)
    return found


def _dup_of(inode, fd):
    """A duplicate of fd if it still is the socket with that inode, else None."""
    try:
        dup = os.dup(fd)
    except OSError:
        return None
    try:
        if str(os.fstat(dup).st_ino) == inode:
            return dup
    except OSError:
        pass
    os.close(dup)                                   # the fd number was reused meanwhile
    return None


def _socket_fds(inode):
    """Every fd of this process open on the socket with that inode."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd) == "socket:[%s]" % inode:
                out.append(int(fd))
        except OSError:
            continue
    return out


def _with_socket(inode, fn, fd=None):
    """fn(sock) on a duplicate of this process's socket with that inode (its own fd stays open); None when
    it is gone or fn raised OSError."""
    fd = _own_sockets().get(inode) if fd is None else fd
    dup = _dup_of(inode, fd) if fd is not None else None
    if dup is None:
        # the fd a scan found may have been another thread's short-lived duplicate of the socket (the
        # watcher's, closed since): any other fd of the same socket will do
        for f in sorted(_socket_fds(inode)):
            dup = _dup_of(inode, f)
            if dup is not None:
                break
        else:
            return None
    try:
        s = socket.socket(fileno=dup)
    except OSError:
        os.close(dup)
        return None
    try:
        return fn(s)
    except OSError:
        return None
    finally:
        s.close()


def _norm(addr):
    ip, port = addr[:2]
    if ip.startswith("::ffff:") and "." in ip:
        ip = ip[7:]
    return ip, port


def _describe(sock):
    """(listening?, local (ip, port), remote (ip, port) or None) of a TCP socket; None for other sockets."""
    if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return None
    local = _norm(sock.getsockname())
    if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
        return True, local, None
    try:
        return False, local, _norm(sock.getpeername())
    except OSError:
        return False, local, None         # not connected (yet)


def _attach_no_payload(sock):
    # every segment carrying payload is dropped (store_gate.NO_PAYLOAD; the handshake and ACKs pass)
    store_gate.attach_filter(sock, store_gate.NO_PAYLOAD)
    return True


def _mac(nonce, claim):
    return hmac.new(auth.job_key(), b"rpc claim\0" + nonce + claim, hashlib.sha256).digest()


def _recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            break
        buf += chunk
    return buf


def _split_url(url):
    # TensorPipe's uv address: uv://host:port (IPv6 hosts bracketed or not)
    m = re.match(r"^[a-z]+://\[?([^\]]*?)\]?:(\d+)$", url)
    return (m.group(1), int(m.group(2))) if m else None


class Guard:
    """The guard of one process for one RPC session. `host`: the address its claim listener binds (the one
    TensorPipe listens on); `what`: how logs name this process ("pserver 0 (127.0.0.1:6170)"); `name`: its
    RPC worker name, sent in its claims."""

    def __init__(self, host, what, name=""):
        global _current
        self.what, self.name = what, name
        self.tp = None                 # (ip, port) of our TensorPipe listener
        self.peers = {}                # TensorPipe (ip, port) of a peer -> (its name, its claim address)
        self.known = {}                # inode of a socket of ours -> ("out"|"in"|"other", addresses)
        self.admitted = {}             # inode of an accepted connection -> claimant (None: refused)
        self.first_seen = {}           # inode of an accepted, unclaimed connection -> when seen first
        self.admitted_from = {}        # inode of an admitted connection -> (claimant's worker name, its address)
        self._fds = {}                 # fd number -> socket inode (None: not a socket), as last scanned
        # connections are made while the job starts: watch closely until the caller says it has settled
        self.fast_until = time.monotonic() + 120.0
        self.closed = False
        self._lock = threading.Lock()
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(fam, socket.SOCK_STREAM)
        self.sock.bind((host, 0))
        self.sock.listen(64)
        self.address = "%s:%d" % (host, self.sock.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True, name="rpc-guard-claims").start()
        threading.Thread(target=self._watch, daemon=True, name="rpc-guard-watch").start()
        _current = self

    def close(self):
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass

    def settle(self, after_s=1.0):
        """The job's connections are being made now: once none has come for after_s, look for new ones
        only now and then (a later connection then waits a second or two for its admission)."""
        self.fast_until = time.monotonic() + after_s

    # the store's view -------------------------------------------------------------------------------------
    def listening(self, url):
        """TensorPipe listens at url (about to be published): filter the listening socket, and refuse any
        connection that reached it before (nobody of the job knows the address yet)."""
        addr = _split_url(url)
        if addr is None:
            raise RuntimeError("%s: cannot guard the RPC listener at %r (not a TCP address); set %s=0 to run "
                               "unguarded" % (self.what, url, ENV))
        found = None
        for ino, fd in _own_sockets().items():
            d = _with_socket(ino, _describe, fd)
            if d and d[0] and d[1][1] == addr[1]:
                found = ino
                break
        if found is None or _with_socket(found, _attach_no_payload) is None:
            raise RuntimeError("%s: cannot attach the guard's socket filter to the RPC listener at %s (needs "
                               "Linux /proc and SO_ATTACH_FILTER); set %s=0 to run unguarded"
                               % (self.what, url, ENV))
        self.tp = addr
        with self._lock:               # TensorPipe may call its own listener too
            self.peers[addr] = ("itself", self.address)
        for ino, fd in _own_sockets().items():
            d = _with_socket(ino, _describe, fd)
            if d and not d[0] and d[2] is not None and d[1][1] == addr[1]:
                self._refuse_conn(ino, d[2], "it connected before the listener's address was published")

    def peer(self, name, url, claim_address):
        addr = _split_url(url)
        if addr is not None and claim_address:
            with self._lock:
                self.peers[addr] = (name, claim_address)
                # a connection already seen may be to this peer: look at the unclassified ones again
                for ino in [i for i, k in self.known.items() if k[0] == "other"]:
                    del self.known[ino]

    # incoming claims --------------------------------------------------------------------------------------
    def _accept(self):
        while not self.closed:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._claim_in, args=(conn, "%s:%d" % peer[:2]), daemon=True,
                             name="rpc-guard-claim").start()

    def _claim_in(self, conn, addr):
        with conn:
            head = b""
            try:
                conn.settimeout(CLAIM_S)
                nonce = os.urandom(32)
                conn.sendall(_MAGIC + nonce)
                head = _recv_exact(conn, 2)
                n = struct.unpack(">H", head)[0] if len(head) == 2 else 0
                claim = _recv_exact(conn, n) if 0 < n <= 512 else b""
                mac = _recv_exact(conn, 32) if claim else b""
            except socket.timeout:
                self._log_refusal(addr, "it did not answer the claim challenge within %.0fs" % CLAIM_S)
                return
            except OSError:
                return
            if not head:
                return      # closed without a word: a port probe
            if not claim or len(mac) != 32 or not hmac.compare_digest(mac, _mac(nonce, claim)):
                self._log_refusal(addr, "it did not answer the claim challenge with this job's token (%s)"
                                  % auth.TOKEN_ENV)
                return
            try:
                src_ip, src_port, dst_port, name = claim.decode().split(" ", 3)
                src = (src_ip, int(src_port))
            except ValueError:
                return
            ok = False
            end = time.monotonic() + 2.0
            while not ok and time.monotonic() < end and self.tp is not None and int(dst_port) == self.tp[1]:
                ok = self._admit(src, name)
                if not ok:
                    time.sleep(0.02)
            try:
                conn.sendall(b"+" if ok else b"-")
            except OSError:
                pass

    def _admit(self, src, name):
        for ino, fd in _own_sockets().items():
            d = _with_socket(ino, _describe, fd)
            if d and not d[0] and d[1][1] == self.tp[1] and d[2] == src:
                if self.admitted.get(ino):
                    return True            # claimed before (the answer to an earlier claim was lost)
                if _with_socket(ino, lambda s: s.setsockopt(socket.SOL_SOCKET, _SO_DETACH_FILTER, 0) or True, fd):
                    with self._lock:
                        self.admitted[ino] = name
                        self.first_seen.pop(ino, None)
                        self.known[ino] = ("in", d[2])
                        self.admitted_from[ino] = (name, "%s:%d" % src)
                    _LOG.debug("%s: admitted the RPC connection from %s:%d (%s)", self.what, src[0], src[1], name)
                    return True
        return False

    # watching connections --------------------------------------------------------------------------------
    def _watch(self):
        n = 0
        while not self.closed:
            now = time.monotonic()
            try:
                self._scan(now, full=n % 5 == 0)
            except Exception as e:     # never let the watch die silently
                _LOG.warning("%s: RPC guard scan failed: %s", self.what, e)
            n += 1
            time.sleep(0.05 if now < self.fast_until else 0.5)

    def _fd_sockets(self, full):
        """{socket inode: fd} of this process; between full scans only new fd numbers are read (an fd
        closed and reused between two scans is caught by the next full one)."""
        names = os.listdir("/proc/self/fd")
        fds = {}
        for fd in names:
            ino = self._fds.get(fd, False) if not full else False
            if ino is False:
                try:
                    link = os.readlink("/proc/self/fd/" + fd)
                except OSError:
                    continue
                ino = link[8:-1] if link.startswith("socket:[") else None
            fds[fd] = ino
        self._fds = fds
        return {ino: int(fd) for fd, ino in fds.items() if ino is not None}

    def _scan(self, now, full=True):
        own = self._fd_sockets(full)
        with self._lock:
            peers = dict(self.peers)
            for ino in [i for i in self.known if i not in own]:    # closed: forget it
                del self.known[ino]
                self.admitted.pop(ino, None)
                self.admitted_from.pop(ino, None)
                self.first_seen.pop(ino, None)
        for ino, fd in own.items():
            kind = self.known.get(ino)
            if kind is None:
                d = _with_socket(ino, _describe, fd)
                if d is None or d[0]:
                    self.known[ino] = ("other", None)
                    continue
                listening, local, remote = d
                if remote is None:
                    continue                         # connecting, or not a connection: look again later
                # a new connection: more may follow (TensorPipe opens one per channel after the first)
                self.fast_until = max(self.fast_until, now + 1.0)
                if remote in peers:
                    kind = self.known[ino] = ("out", (local, remote))
                    name, claim_addr = peers[remote]
                    threading.Thread(target=self._claim_out, args=(ino, local, remote, claim_addr, name),
                                     daemon=True, name="rpc-guard-claim-out").start()
                    continue
                if self.tp is not None and local[1] == self.tp[1] and local[0] == self.tp[0]:
                    kind = self.known[ino] = ("in", remote)
                else:
                    self.known[ino] = ("other", None)
                    continue
            if kind[0] == "in" and ino not in self.admitted:
                seen = self.first_seen.setdefault(ino, now)
                if now - seen > CLAIM_S:
                    self._refuse_conn(ino, kind[1], "it did not prove within %.0fs that it holds this job's "
                                                    "token (%s)" % (CLAIM_S, auth.TOKEN_ENV))

    def _refuse_conn(self, ino, remote, why):
        with self._lock:
            self.first_seen.pop(ino, None)
            self.admitted[ino] = None      # handled: not refused twice
        self._log_refusal("%s:%d" % remote[:2], why)
        _with_socket(ino, lambda s: s.shutdown(socket.SHUT_RDWR))

    def _log_refusal(self, addr, why):
        _refusals.append((addr, why))
        _LOG.warning("%s: the RPC listener refused a connection from %s: %s", self.what, addr, why)

    def _claim_out(self, ino, local, remote, claim_addr, name):
        host, _, port = claim_addr.rpartition(":")
        why = "no answer"
        end = time.monotonic() + 2 * CLAIM_S
        while not self.closed and ino in self.known and time.monotonic() < end:
            try:
                with socket.create_connection((host, int(port)), timeout=CLAIM_S) as s:
                    head = _recv_exact(s, len(_MAGIC) + 32)
                    if len(head) == len(_MAGIC) + 32 and head.startswith(_MAGIC):
                        claim = ("%s %d %d %s" % (local[0], local[1], remote[1], self.name)).encode()[:512]
                        s.sendall(struct.pack(">H", len(claim)) + claim + _mac(head[len(_MAGIC):], claim))
                        answer = _recv_exact(s, 1)
                        if answer == b"+":
                            return
                        why = "it did not find the connection" if answer == b"-" else "it closed the claim"
                    else:
                        why = "it did not greet with a claim challenge"
            except OSError as e:
                why = str(e)
            time.sleep(0.3)      # the listener's process may not have accepted the connection yet
        if not self.closed and ino in self.known:
            _LOG.warning("%s: %s did not admit this process's RPC connection %s:%d -> %s:%d (%s)", self.what,
                         name, local[0], local[1], remote[0], remote[1], why)


class GuardedStore:
    """Builds the store handed to init_rpc: the job's store, with TensorPipe's address keys watched."""

    def __new__(cls, store, guard, name):
        import torch.distributed as dist

        class _Store(dist.Store):
            # TensorPipe's keys are "<prefix>/addrs/<worker name>"; our claim addresses sit beside them
            def set(self, key, value):
                m = re.match(r"^(.*/)?addrs/(.+)$", key)
                if m and m.group(2) == name:
                    url = bytes(value).decode() if not isinstance(value, str) else value
                    guard.listening(url)
                    store.set((m.group(1) or "") + "paddle_compat_guard/" + name, guard.address)
                return store.set(key, value)

            def get(self, key):
                value = store.get(key)
                m = re.match(r"^(.*/)?addrs/(.+)$", key)
                if m and m.group(2) != name:
                    claim = store.get((m.group(1) or "") + "paddle_compat_guard/" + m.group(2))
                    guard.peer(m.group(2), bytes(value).decode(), bytes(claim).decode())
                return value

            def add(self, key, n):
                return store.add(key, n)

            def check(self, keys):
                return store.check(keys)

            def wait(self, keys, timeout=None):
                return store.wait(keys) if timeout is None else store.wait(keys, timeout)

            def compare_set(self, key, expected, desired):
                return store.compare_set(key, expected, desired)

            def delete_key(self, key):
                return store.delete_key(key)

            def num_keys(self):
                return store.num_keys()

            def set_timeout(self, timeout):
                return store.set_timeout(timeout)

        return _Store()
