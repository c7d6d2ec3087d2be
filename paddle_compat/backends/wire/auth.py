"""Mutual challenge-response on every new connection, before any frame is read (standard library only).

    server -> client   "PCWH" "S" server nonce (32)
    client -> server   "PCWH" "C" client nonce (32), identity length (u16), identity (<= 512 bytes, utf-8),
                       HMAC-SHA256(key, "client" | client nonce | server nonce | identity)
    server -> client   "O" HMAC-SHA256(key, "server" | server nonce | client nonce | identity | server identity),
                       server identity length (u16), server identity        (accepted)
                   or  "K"                                       (the MAC is wrong: the keys differ)
                   or  "R" reason length (u16), reason           (the key is right, the identity is refused)
                   or  "W" reason length (u16), reason           (not now: the client retries until its deadline)

The server checks with hmac.compare_digest, then proves itself the same way; fresh nonces on both sides, so
nothing recorded can be replayed. The client's hello is at most HELLO_MAX bytes and must arrive within
PREAUTH_S seconds, or the connection is dropped: slow, half-open, garbage and zero-byte connections never reach
a handler. The identity a client claims ("trainer 3|<plan digest>") is handed to the server's owner, which may
refuse it (a second live trainer 3, a differently transpiled trainer).
"""

import hashlib
import hmac
import os
import socket
import struct
import time

from ..job_env import NO_KEY_ENV, TOKEN_ENV, TOKEN_FILE_ENV, resolve_key

__all__ = ["HandshakeError", "KeyMismatch", "Refused", "TryLater", "NotOurProtocol", "server_handshake",
           "client_handshake",
           "PREAUTH_S", "HELLO_MAX", "IDENTITY_MAX"]

MAGIC = b"PCWH"
PREAUTH_S = 10.0
IDENTITY_MAX = 512
HELLO_MAX = 4 + 1 + 32 + 2 + IDENTITY_MAX + 32
_U16 = struct.Struct("<H")


class HandshakeError(Exception):
    """The handshake failed; `reason` says why in a few words (logged with the peer's address)."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class KeyMismatch(HandshakeError):
    pass


class Refused(HandshakeError):
    pass


class TryLater(Refused):
    """Refused for now (a pserver still serving the previous job of a script that runs several): the client
    connects again until its deadline."""


class NotOurProtocol(HandshakeError):
    pass


class _Closed(HandshakeError):
    pass


def _mac(key, *parts):
    return hmac.new(key, b"\0".join(parts), hashlib.sha256).digest()


def _recv_exact(sock, n, deadline, what, first=True):
    """n bytes before `deadline`; `first`: nothing of the handshake has arrived before these."""
    buf = bytearray(n)
    view = memoryview(buf)
    pos = 0
    while pos < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise HandshakeError("timeout: %s did not arrive in time (%d bytes of %d came)" % (what, pos, n))
        sock.settimeout(left)
        try:
            got = sock.recv_into(view[pos:])
        except socket.timeout:
            raise HandshakeError("timeout: %s did not arrive in time (%d bytes of %d came)" % (what, pos, n)) \
                from None
        except OSError as e:
            if pos == 0 and first:
                raise _Closed("closed the connection before the handshake (%s)" % (e.strerror or e)) from None
            raise _Closed("the connection broke during the handshake (%s)" % (e.strerror or e)) from None
        if not got:
            if pos == 0 and first:
                raise _Closed("closed the connection before the handshake")
            raise HandshakeError("garbage: the connection closed after %d bytes of %s" % (pos, what))
        pos += got
    return bytes(buf)


def server_handshake(sock, key, server_identity, admit, timeout=PREAUTH_S):
    """Run the server's side; returns (client identity, what admit returned). Raises HandshakeError (the
    connection is then to be closed; a refusal the client should hear about has been sent to it)."""
    deadline = time.monotonic() + timeout
    nonce_s = os.urandom(32)
    try:
        sock.settimeout(timeout)
        sock.sendall(MAGIC + b"S" + nonce_s)
    except OSError as e:
        raise _Closed("closed the connection before the handshake (%s)" % (e.strerror or e)) from None
    head = _recv_exact(sock, 4 + 1 + 32 + 2, deadline, "its hello")
    if head[:5] != MAGIC + b"C":
        raise NotOurProtocol("garbage: it does not speak this job's protocol (first bytes %r)" % head[:8])
    nonce_c = head[5:37]
    n = _U16.unpack(head[37:39])[0]
    if n > IDENTITY_MAX:
        raise HandshakeError("garbage: it claims an identity of %d bytes (at most %d)" % (n, IDENTITY_MAX))
    rest = _recv_exact(sock, n + 32, deadline, "its hello", first=False)
    ident_b, mac = rest[:n], rest[n:]
    if not hmac.compare_digest(mac, _mac(key, b"client", nonce_c, nonce_s, ident_b)):
        _send_quiet(sock, b"K")
        try:
            claimed = ident_b.decode("utf-8")
        except UnicodeDecodeError:
            claimed = repr(ident_b[:40])
        raise KeyMismatch("bad key: it claims to be %s but does not hold this job's key" % claimed.split("|")[0])
    identity = ident_b.decode("utf-8", "replace")
    try:
        admitted = admit(identity) if admit is not None else None
    except Refused as e:
        msg = e.reason.encode("utf-8")[:4000]
        _send_quiet(sock, (b"W" if isinstance(e, TryLater) else b"R") + _U16.pack(len(msg)) + msg)
        raise
    sid = server_identity.encode("utf-8")[:IDENTITY_MAX]
    try:
        sock.sendall(b"O" + _mac(key, b"server", nonce_s, nonce_c, ident_b, sid) + _U16.pack(len(sid)) + sid)
    except OSError:
        pass    # the client is gone already: its connection's reader sees that at once
    sock.settimeout(None)
    return identity, admitted


def _send_quiet(sock, data):
    try:
        sock.sendall(data)
    except OSError:
        pass


def client_handshake(sock, key, identity, timeout, where):
    """Run the client's side on a connected socket; returns the server's identity. Raises KeyMismatch,
    Refused, NotOurProtocol (the messages name `where`), or HandshakeError/OSError (worth a retry)."""
    deadline = time.monotonic() + timeout
    head = _recv_exact(sock, 4 + 1 + 32, deadline, "%s's hello" % where)
    if head[:5] != MAGIC + b"S":
        raise NotOurProtocol("%s is not a paddle_compat job endpoint (it sent %r)" % (where, head[:8]))
    nonce_s = head[5:]
    nonce_c = os.urandom(32)
    ident_b = identity.encode("utf-8")
    if len(ident_b) > IDENTITY_MAX:
        raise ValueError("identity %r is longer than %d bytes" % (identity, IDENTITY_MAX))
    sock.sendall(MAGIC + b"C" + nonce_c + _U16.pack(len(ident_b)) + ident_b +
                 _mac(key, b"client", nonce_c, nonce_s, ident_b))
    status = _recv_exact(sock, 1, deadline, "%s's answer" % where)
    if status == b"K":
        raise KeyMismatch("%s refused this process: the job keys differ" % where)
    if status in (b"R", b"W"):
        n = _U16.unpack(_recv_exact(sock, 2, deadline, "%s's answer" % where))[0]
        why = _recv_exact(sock, n, deadline, "%s's answer" % where).decode("utf-8", "replace")
        raise (TryLater if status == b"W" else Refused)(why)
    if status != b"O":
        raise NotOurProtocol("%s answered the handshake with %r" % (where, status))
    mac = _recv_exact(sock, 32, deadline, "%s's proof" % where)
    n = _U16.unpack(_recv_exact(sock, 2, deadline, "%s's proof" % where))[0]
    sid = _recv_exact(sock, n, deadline, "%s's proof" % where)
    if not hmac.compare_digest(mac, _mac(key, b"server", nonce_s, nonce_c, ident_b, sid)):
        raise KeyMismatch("%s could not prove it holds this job's key: the job keys differ" % where)
    sock.settimeout(None)
    return sid.decode("utf-8", "replace")


_KEYS = {}


def process_key():
    """(key, where it came from) for this process's environment (job_env.resolve_key, cached per setting)."""
    setting = tuple(os.environ.get(n, "") for n in (TOKEN_ENV, TOKEN_FILE_ENV, NO_KEY_ENV))
    got = _KEYS.get(setting)
    if got is None:
        got = _KEYS[setting] = resolve_key()
    return got
