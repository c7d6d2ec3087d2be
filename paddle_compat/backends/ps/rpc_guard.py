"""A guard on this process's TensorPipe listener: bytes from a connection reach TensorPipe only once a process
holding the job's token has claimed that connection as its own.

TensorPipe accepts any TCP connection and parses what arrives; bytes that are not its protocol make it throw
std::bad_alloc and abort the process. Its reactor is C++ we cannot wrap, and piping every tensor through a
proxy of ours would cost throughput, so the kernel does the gating:

- when TensorPipe publishes its listener's address (through the job's store, which we wrap), a classic BPF
  socket filter is attached to the listening socket: segments carrying payload are dropped, bare SYN/ACK/FIN
  pass. Accepted connections inherit it, so a new connection completes its handshake but nothing it sends
  reaches TensorPipe (its sender's TCP keeps retransmitting);
- every process runs a small claim listener (a private port on its member address, published in the store)
  and watches its own outgoing connections (/proc/net/tcp, our sockets only) to the job's RPC listeners. For
  each new one it claims it at the listener's process: that process sends a fresh nonce, the claimant answers
  HMAC-SHA256(job key, nonce + the connection's addresses); if it verifies, the filter is detached from that
  one accepted socket and the next retransmission is delivered (a new connection costs a few hundred ms);
- an accepted connection nobody claims within CLAIM_S is refused: logged with its socket address and shut
  down (TensorPipe sees a connection error on a pipe it never used). A wrong claim is refused the same way.

Linux only (SO_ATTACH_FILTER, /proc). PADDLE_COMPAT_RPC_GUARD=0 turns it off (the listener then accepts any
connection, as TensorPipe alone does).
"""

import ctypes
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

__all__ = ["enabled", "Guard", "GuardedStore", "refusals", "CLAIM_S", "ENV"]

ENV = "PADDLE_COMPAT_RPC_GUARD"
CLAIM_S = 10.0            # an accepted connection unclaimed this long is refused
_MAGIC = b"PCR1"
_LOG = logging.getLogger("paddle_compat.ps.rpc_guard")
_SO_ATTACH_FILTER, _SO_DETACH_FILTER = 26, 27
# cBPF on a TCP socket sees the segment from its TCP header: A = len; X = A; A = header length
# (data offset nibble * 4); accept when they are equal (no payload), else drop
_NO_PAYLOAD = [(0x80, 0, 0, 0), (0x07, 0, 0, 0), (0x30, 0, 0, 12), (0x54, 0, 0, 0xF0), (0x74, 0, 0, 2),
               (0x1D, 0, 1, 0), (0x06, 0, 0, 0xFFFFFFFF), (0x06, 0, 0, 0)]
_refusals = []            # (peer address, reason), read by tests


def enabled():
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "off", "no")


def refusals():
    return list(_refusals)


# /proc ---------------------------------------------------------------------------------------------------
def _decode(hexaddr):
    h, p = hexaddr.split(":")
    if len(h) == 8:
        ip = socket.inet_ntoa(struct.pack("<I", int(h, 16)))
    else:
        raw = b"".join(struct.pack("<I", int(h[i:i + 8], 16)) for i in range(0, 32, 8))
        ip = socket.inet_ntop(socket.AF_INET6, raw)
        if ip.startswith("::ffff:") and "." in ip:
            ip = ip[7:]
    return ip, int(p, 16)


def _connections():
    """[(state hex, local (ip, port), remote (ip, port), inode)] of every TCP socket of this network namespace."""
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    c = line.split()
                    out.append((c[3], _decode(c[1]), _decode(c[2]), c[9]))
        except OSError:
            continue
    return out


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


def _with_socket(inode, fn):
    """Run fn(sock) on a duplicate of this process's socket with that inode (TensorPipe's own fd stays
    open); False when it is gone."""
    fd = _own_sockets().get(inode)
    if fd is None:
        return False
    try:
        dup = os.dup(fd)
    except OSError:
        return False
    if str(os.fstat(dup).st_ino) != inode:     # the fd number was reused meanwhile
        os.close(dup)
        return False
    s = socket.socket(fileno=dup)
    try:
        fn(s)
        return True
    except OSError:
        return False
    finally:
        s.close()


def _attach_no_payload(sock):
    buf = b"".join(struct.pack("HBBI", *ins) for ins in _NO_PAYLOAD)
    arr = ctypes.create_string_buffer(buf, len(buf))
    sock.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER, struct.pack("HL", len(_NO_PAYLOAD), ctypes.addressof(arr)))


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
    TensorPipe listens on); `what`: how logs name this process ("pserver 0 (127.0.0.1:6170)")."""

    def __init__(self, host, what):
        self.what = what
        self.tp = None                 # (ip, port) of our TensorPipe listener
        self.peers = {}                # TensorPipe (ip, port) of a peer -> (its name, its claim address)
        self.claimed_out = {}          # our outgoing connection (local, remote) -> time claimed (or tried)
        self.admitted = {}             # inode of an accepted connection -> claimant
        self.first_seen = {}           # inode of an accepted, unclaimed connection -> (time, remote)
        self.foreign = set()           # connections to a peer that are another process's
        self.fast_until = time.monotonic() + 30.0
        self.closed = False
        self._lock = threading.Lock()
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(fam, socket.SOCK_STREAM)
        self.sock.bind((host, 0))
        self.sock.listen(64)
        self.address = "%s:%d" % (host, self.sock.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True, name="rpc-guard-claims").start()
        threading.Thread(target=self._watch, daemon=True, name="rpc-guard-watch").start()

    def close(self):
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass

    # the store's view -------------------------------------------------------------------------------------
    def listening(self, url):
        """TensorPipe listens at url (about to be published): filter the listening socket, and refuse any
        connection that reached it before (nobody of the job knows the address yet)."""
        addr = _split_url(url)
        if addr is None:
            raise RuntimeError("%s: cannot guard the RPC listener at %r (not a TCP address); set %s=0 to run "
                               "unguarded" % (self.what, url, ENV))
        own = _own_sockets()
        listener = [ino for st, local, _, ino in _connections() if st == "0A" and local[1] == addr[1] and ino in own]
        if not listener or not _with_socket(listener[0], _attach_no_payload):
            raise RuntimeError("%s: cannot attach the guard's socket filter to the RPC listener at %s (needs "
                               "Linux /proc and SO_ATTACH_FILTER); set %s=0 to run unguarded"
                               % (self.what, url, ENV))
        self.tp = addr
        with self._lock:               # TensorPipe may call its own listener too
            self.peers[addr] = ("itself", self.address)
        for st, local, remote, ino in _connections():
            if st == "01" and local[1] == addr[1] and ino in own:
                self._refuse_conn(ino, remote, "it connected before the listener's address was published")

    def peer(self, name, url, claim_address):
        addr = _split_url(url)
        if addr is not None and claim_address:
            with self._lock:
                self.peers[addr] = (name, claim_address)
                self.fast_until = max(self.fast_until, time.monotonic() + 30.0)

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
            end = time.monotonic() + 3.0
            while not ok and time.monotonic() < end and self.tp is not None and int(dst_port) == self.tp[1]:
                ok = self._admit(src, name)
                if not ok:
                    time.sleep(0.02)
            try:
                conn.sendall(b"+" if ok else b"-")
            except OSError:
                pass

    def _admit(self, src, name):
        for st, local, remote, ino in _connections():
            if local[1] == self.tp[1] and remote == src and st == "01":
                if _with_socket(ino, lambda s: s.setsockopt(socket.SOL_SOCKET, _SO_DETACH_FILTER, 0)):
                    with self._lock:
                        self.admitted[ino] = name
                        self.first_seen.pop(ino, None)
                    _LOG.debug("%s: admitted the RPC connection from %s:%d (%s)", self.what, src[0], src[1], name)
                    return True
        return False

    # watching connections --------------------------------------------------------------------------------
    def _watch(self):
        while not self.closed:
            now = time.monotonic()
            try:
                self._scan(now)
            except Exception as e:     # never let the watch die silently
                _LOG.warning("%s: RPC guard scan failed: %s", self.what, e)
            time.sleep(0.01 if now < self.fast_until else 0.2)

    def _scan(self, now):
        conns = _connections()
        with self._lock:
            peers = dict(self.peers)
        own = None
        live_out, live_in = set(), set()
        for st, local, remote, ino in conns:
            if st != "01":
                continue
            if remote in peers:
                key = (local, remote)
                live_out.add(key)
                if key in self.claimed_out or key in self.foreign:
                    continue
                own = own if own is not None else _own_sockets()
                if ino not in own:
                    self.foreign.add(key)
                    continue
                self.claimed_out[key] = now
                name, claim_addr = peers[remote]
                threading.Thread(target=self._claim_out, args=(key, claim_addr, name), daemon=True,
                                 name="rpc-guard-claim-out").start()
            elif self.tp is not None and local[1] == self.tp[1] and local[0] == self.tp[0]:
                live_in.add(ino)
                if ino in self.admitted:
                    continue
                seen = self.first_seen.setdefault(ino, (now, remote))
                if now - seen[0] > CLAIM_S:
                    self._refuse_conn(ino, remote, "it did not prove within %.0fs that it holds this job's "
                                                   "token (%s)" % (CLAIM_S, auth.TOKEN_ENV))
        with self._lock:
            for d in (self.claimed_out, self.foreign):
                for k in [k for k in d if k not in live_out]:
                    d.discard(k) if isinstance(d, set) else d.pop(k)
            for d in (self.admitted, self.first_seen):
                for k in [k for k in d if k not in live_in]:
                    del d[k]

    def _refuse_conn(self, ino, remote, why):
        with self._lock:
            self.first_seen.pop(ino, None)
            self.admitted[ino] = None      # handled: not refused twice
        self._log_refusal("%s:%d" % remote, why)
        _with_socket(ino, lambda s: s.shutdown(socket.SHUT_RDWR))

    def _log_refusal(self, addr, why):
        _refusals.append((addr, why))
        _LOG.warning("%s: the RPC listener refused a connection from %s: %s", self.what, addr, why)

    def _claim_out(self, key, claim_addr, name):
        (lip, lport), (rip, rport) = key
        host, _, port = claim_addr.rpartition(":")
        ok = False
        try:
            with socket.create_connection((host, int(port)), timeout=CLAIM_S) as s:
                head = _recv_exact(s, len(_MAGIC) + 32)
                if len(head) == len(_MAGIC) + 32 and head.startswith(_MAGIC):
                    claim = ("%s %d %d %s" % (lip, lport, rport, self.what)).encode()[:512]
                    s.sendall(struct.pack(">H", len(claim)) + claim + _mac(head[len(_MAGIC):], claim))
                    ok = _recv_exact(s, 1) == b"+"
        except OSError as e:
            _LOG.debug("%s: claiming the RPC connection to %s failed: %s", self.what, name, e)
        if not ok:
            # forget it: the next scan tries again (the connection may have been reset meanwhile)
            time.sleep(0.2)
            with self._lock:
                self.claimed_out.pop(key, None)


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
