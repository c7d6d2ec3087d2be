"""The RPC guard (paddle_compat/backends/ps/rpc_guard.py) on a plain listening socket standing in for
TensorPipe's: bytes of an unclaimed connection never reach the listener's process, a claim made with the
job's token admits the connection (its bytes then arrive, and the claimant's name maps to its address), a
stranger at the claim listener and a connection nobody claims are refused and logged with their socket
addresses."""

import os
import socket
import sys
import time

import pytest

from paddle_compat.backends.ps import rpc_guard

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux socket filters and /proc")


def _listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    return s, "uv://127.0.0.1:%d" % s.getsockname()[1]


def _recv(sock, timeout):
    sock.settimeout(timeout)
    try:
        return sock.recv(100)
    except socket.timeout:
        return None


def test_unclaimed_bytes_are_held_back_and_a_claim_admits_them(monkeypatch):
    monkeypatch.setenv("PADDLE_COMPAT_JOB_TOKEN", "unit")
    lis, url = _listener()
    server = rpc_guard.Guard("127.0.0.1", "server")
    client = None
    try:
        server.listening(url)
        # the server's own watch would claim a connection of its own process to its listener (TensorPipe
        # may call itself): here the client side is a guard of its own
        server.peers.clear()
        c = socket.create_connection(lis.getsockname())
        conn, _ = lis.accept()
        c.sendall(b"hello")
        assert _recv(conn, 0.5) is None
        client = rpc_guard.Guard("127.0.0.1", "client", "trainer_9")
        client.peer("server", url, server.address)
        assert _recv(conn, 10) == b"hello"     # delivered by TCP's retransmission once admitted
        # what an RPC message refused at the server names: the admitted connection's socket address
        monkeypatch.setattr(rpc_guard, "_current", server)
        assert rpc_guard.addresses_of("trainer_9") == ["%s:%d" % c.getsockname()[:2]]
        c.close()
        conn.close()
    finally:
        server.close()
        if client is not None:
            client.close()
        lis.close()


def test_strangers_are_refused_and_logged(monkeypatch):
    monkeypatch.setenv("PADDLE_COMPAT_JOB_TOKEN", "unit")
    monkeypatch.setattr(rpc_guard, "CLAIM_S", 1.0)
    lis, url = _listener()
    g = rpc_guard.Guard("127.0.0.1", "server")
    try:
        g.listening(url)
        g.peers.clear()
        # garbage at the claim listener
        host, port = g.address.rsplit(":", 1)
        with socket.create_connection((host, int(port))) as s:
            s.sendall(b"GET / HTTP/1.0\r\n\r\n" + os.urandom(64))
            bad_claim = "%s:%d" % s.getsockname()[:2]
            s.recv(100)
        # a connection to the guarded listener that nobody claims
        c = socket.create_connection(lis.getsockname())
        conn, _ = lis.accept()
        silent = "%s:%d" % c.getsockname()[:2]
        c.sendall(os.urandom(4096))
        assert _recv(conn, 0.5) is None
        end = time.monotonic() + 10
        while silent not in [a for a, _ in rpc_guard.refusals()] and time.monotonic() < end:
            time.sleep(0.05)
        refused = dict(rpc_guard.refusals())
        assert "did not answer the claim challenge" in refused[bad_claim]
        assert "did not prove within" in refused[silent]
        assert _recv(conn, 2) == b""           # shut down: the listener's process reads an EOF, no bytes
        c.close()
        conn.close()
    finally:
        g.close()
        lis.close()


def test_switch(monkeypatch):
    monkeypatch.delenv(rpc_guard.ENV, raising=False)
    assert rpc_guard.enabled()
    monkeypatch.setenv(rpc_guard.ENV, "0")
    assert not rpc_guard.enabled()
