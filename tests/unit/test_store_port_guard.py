"""The rendezvous store's private loopback port (backends/store_gate.py): once the hosting process's own
store client is connected, a socket filter lets bytes through only from the gate's own connections; a
stranger's connection completes its handshake, none of its bytes arrive, and it is logged with its address."""

import socket
import sys
import time

import pytest

from paddle_compat.backends import store_gate

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux socket filters and /proc")


def _server():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s


def _got(conn, timeout=0.6):
    conn.settimeout(timeout)
    try:
        return conn.recv(100)
    except socket.timeout:
        return None


def test_filter_passes_listed_source_ports_only():
    srv = _server()
    mine = socket.socket()
    mine.bind(("127.0.0.1", 0))
    store_gate.attach_filter(srv, store_gate.ports_or_no_payload({mine.getsockname()[1], 1}))
    mine.connect(srv.getsockname())
    a, _ = srv.accept()
    stranger = socket.create_connection(srv.getsockname())
    b, _ = srv.accept()                       # the handshake completes
    mine.sendall(b"mine")
    stranger.sendall(b"stranger")
    assert _got(a) == b"mine"
    assert _got(b) is None                    # dropped (and retransmitted, and dropped again)
    for s in (mine, stranger, a, b, srv):
        s.close()


def test_store_filter_lets_the_gate_through_and_names_a_stranger():
    srv = _server()
    port = srv.getsockname()[1]
    listener = socket.socket(fileno=srv.dup().detach())
    early = socket.create_connection(("127.0.0.1", port))      # the host's own store client
    e_srv, _ = srv.accept()
    f = store_gate.StoreFilter(listener, port, "test store")
    f.activate()
    ours, our_port = f.connect()
    o_srv, _ = srv.accept()
    stranger = socket.create_connection(("127.0.0.1", port))
    s_srv, _ = srv.accept()
    early.sendall(b"early")
    ours.sendall(b"gate")
    stranger.sendall(b"stranger")
    assert _got(e_srv) == b"early" and _got(o_srv) == b"gate" and _got(s_srv) is None
    addr = "127.0.0.1:%d" % stranger.getsockname()[1]
    end = time.monotonic() + 5
    while not any(a == addr for a, _ in store_gate._refusals) and time.monotonic() < end:
        time.sleep(0.1)
    assert any(a == addr and "not through the gate" in why for a, why in store_gate._refusals)
    # a released port leaves the filter: a new connection from it (had someone bound it) would be dropped
    f.release(our_port, ours)
    assert our_port not in f.allowed
    for s in (early, stranger, e_srv, o_srv, s_srv, srv, listener):
        s.close()


def test_filter_takes_many_ports():
    """Two instructions a port: a job of hundreds of members (each holds one gate connection) fits."""
    srv = _server()
    mine = socket.socket()
    mine.bind(("127.0.0.1", 0))
    ports = set(range(20000, 21500)) | {mine.getsockname()[1]}
    store_gate.attach_filter(srv, store_gate.ports_or_no_payload(ports))
    mine.connect(srv.getsockname())
    a, _ = srv.accept()
    mine.sendall(b"last")
    assert _got(a) == b"last"
    for s in (mine, a, srv):
        s.close()
