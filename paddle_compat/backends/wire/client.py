"""The client side of the wire transport: one authenticated connection to one endpoint.

    c = Connection("10.0.0.5:6170", "trainer 3|<digest>", deadline=time.monotonic() + 180, what="pserver 0 (...)")
    fut = c.call_async("exchange", 3, names, tensors, want)     # a torch.futures.Future
    c.close()

Connecting retries a refused or reset connection until `deadline` (then PsError naming the endpoint and
FLAGS_rpc_deadline); a key mismatch or a refusal by the server fails at once. Calls carry request ids; one
reader thread completes the futures; sends go out in order without waiting for the server to read them
(frame.Sender). A broken connection fails every
pending call with PeerLostError naming the endpoint (and the server's last word, when it said goodbye). Each
call has a backstop timeout (FLAGS_rpc_deadline * 1.2 + 1 s by default), enforced by one watchdog thread.
"""

import atexit
import errno
import itertools
import socket
import threading
import time
import weakref

from . import auth, codec, frame
from ...ir.lazy import torch
from ..job_env import key_help
from ..ps.errors import PeerLostError, PsDeadlineError, PsError, deadline_s

__all__ = ["Connection", "connect", "exception_for", "KeyMismatchError", "RendezvousError"]


class RendezvousError(TimeoutError):
    """Trainers could not form a group within the deadline; the message names the missing endpoints
    (raised by comm.py; defined here, where a wire answer can name it)."""


class KeyMismatchError(PsError):
    """This process and the one it connected to hold different job keys."""


def exception_for(err, where=None):
    """The exception a WireError answer raises here (a fixed table; nothing named by the bytes is looked up)."""
    if err.kind == "RendezvousError":
        return RendezvousError(err.message)
    table = {"PsError": PsError, "PeerLostError": PeerLostError, "PsDeadlineError": PsDeadlineError,
             "DecodeError": PsError, "RuntimeError": RuntimeError,
             "ValueError": ValueError, "TypeError": TypeError, "KeyError": KeyError, "IndexError": IndexError,
             "OSError": OSError, "TimeoutError": TimeoutError, "NotImplementedError": NotImplementedError,
             "AssertionError": AssertionError}
    cls = table.get(err.kind, RuntimeError)
    return cls(err.message)


def _split(endpoint):
    host, _, port = endpoint.rpartition(":")
    return host.strip("[]"), int(port)


_RETRY = (errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.EPIPE, errno.ETIMEDOUT,
          errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL)


def connect(endpoint, identity, deadline, what, key=None):
    """A connected, authenticated socket and the server's identity; retries until `deadline` (monotonic)."""
    if key is None:
        key, source = auth.process_key()
    else:
        source = "the key given"
    host, port = _split(endpoint)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    last = "nothing accepted a connection"
    delay = 0.02
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise PsError("cannot reach %s at %s: %s for %.0fs (FLAGS_rpc_deadline); is it started, and is "
                          "the endpoint right?" % (what, endpoint, last, deadline_s()))
        s = socket.socket(family, socket.SOCK_STREAM)
        try:
            s.settimeout(min(left, 5.0))
            s.connect((host, port))
            frame.tune(s)
            sid = auth.client_handshake(s, key, identity, max(0.1, deadline - time.monotonic()), what)
            return s, sid
        except auth.KeyMismatch as e:
            s.close()
            raise KeyMismatchError("%s (this process's key comes from %s); %s" % (e.reason, source, key_help())) \
                from None
        except auth.TryLater as e:
            s.close()
            last = "it answered: %s" % e.reason
        except auth.Refused as e:
            s.close()
            raise PsError(e.reason) from None
        except auth.NotOurProtocol as e:
            s.close()
            raise PsError(e.reason) from None
        except auth.HandshakeError as e:
            s.close()
            last = "its handshake did not complete (%s)" % e.reason
        except socket.timeout:
            s.close()
            last = "connecting timed out"
        except OSError as e:
            s.close()
            if e.errno not in _RETRY and not isinstance(e, ConnectionError):
                raise PsError("cannot connect to %s at %s: %s" % (what, endpoint, e)) from None
            last = "nothing accepted a connection" if e.errno == errno.ECONNREFUSED else \
                "the connection failed (%s)" % (e.strerror or e)
        time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
        delay = min(delay * 2, 0.1)


class _Watchdog:
    """One thread for every connection's backstop timeouts."""

    def __init__(self):
        self.lock = threading.Lock()
        self.conns = set()
        self.thread = None
        # an Event, not a flag polled between sleeps: exit sets it and the join returns at once (a sleeping
        # thread held every trainer's exit for up to 0.25 s)
        self.stopping = threading.Event()

    def add(self, conn):
        with self.lock:
            self.conns.add(conn)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, daemon=True, name="wire-watchdog")
                self.thread.start()

    def remove(self, conn):
        with self.lock:
            self.conns.discard(conn)

    def _run(self):
        while not self.stopping.wait(0.25):
            with self.lock:
                conns = list(self.conns)
            now = time.monotonic()
            for c in conns:
                c._expire(now)


_WATCHDOG = _Watchdog()
_LIVE = weakref.WeakSet()


def _close_all_at_exit():
    """Connections still open when the interpreter exits are closed (and our threads ended) before its
    teardown: see wire/server.py's _close_all_at_exit for why (an abort at exit with torch loaded)."""
    for conn in list(_LIVE):
        try:
            conn.close(timeout=1.0)
        except Exception:
            pass
    _WATCHDOG.stopping.set()
    if _WATCHDOG.thread is not None:
        _WATCHDOG.thread.join(1.0)


atexit.register(_close_all_at_exit)


class Connection:
    def __init__(self, endpoint, identity, deadline, what=None, key=None, on_lost=None, timeout=None):
        """timeout: each call's backstop in seconds (default FLAGS_rpc_deadline * 1.2 + 1)."""
        self.endpoint = endpoint
        self.what = what or endpoint
        self.timeout = timeout if timeout is not None else deadline_s() * 1.2 + 1.0
        self.on_lost = on_lost
        self.sock, self.server_identity = connect(endpoint, identity, deadline, self.what, key)
        self.sender = frame.Sender(self.sock)
        self.lock = threading.Lock()
        self.pending = {}           # rid -> (future, deadline, handler name)
        self.ids = itertools.count(1)
        self.lost = None            # why the connection ended
        self.bye = None             # the server's last word (a failure it reported when it left)
        self.closing = False
        self.reader = threading.Thread(target=self._read_loop, daemon=True, name="wire-reader %s" % endpoint)
        self.reader.start()
        _WATCHDOG.add(self)
        _LIVE.add(self)

    def call_async(self, name, *args, timeout=None):
        fut = torch.futures.Future()
        meta, bufs = codec.encode((name, args))
        rid = next(self.ids)
        with self.lock:
            if self.lost is not None:
                raise self._lost_error(name)
            self.pending[rid] = (fut, time.monotonic() + (timeout or self.timeout), name)
        try:
            self.sender.send(frame.REQUEST, rid, meta, bufs)
        except OSError as e:
            self._broken("connection broke while sending (%s)" % (e.strerror or e))
        return fut

    def call(self, name, *args, timeout=None):
        return self.call_async(name, *args, timeout=timeout).wait()

    def _lost_error(self, name):
        why = self.bye or self.lost
        return PeerLostError("lost %s during '%s': %s" % (self.what, name, why))

    def _read_loop(self):
        reader = frame.FrameReader(self.sock)
        while True:
            try:
                kind, rid, meta, bufs = reader.read()
                value = codec.decode(meta, bufs)
            except EOFError:
                return self._broken("connection closed")
            except (frame.FrameError, codec.DecodeError) as e:
                return self._broken("it sent a malformed answer (%s)" % e)
            except OSError as e:
                return self._broken("connection broke (%s)" % (e.strerror or e))
            except Exception as e:
                return self._broken("reading its answer failed (%s: %s)" % (type(e).__name__, e))
            if kind == frame.BYE:
                self.bye = value if isinstance(value, str) and value else None
                continue
            with self.lock:
                entry = self.pending.pop(rid, None)
            if entry is None:
                continue        # answered after its backstop timeout: the caller was told already
            fut = entry[0]
            if kind == frame.ERROR and isinstance(value, codec.WireError):
                fut.set_exception(exception_for(value, self.what))
            else:
                fut.set_result(value)

    def _broken(self, reason):
        with self.lock:
            if self.lost is None:
                self.lost = "it closed the connection" if self.closing else reason
            pending, self.pending = self.pending, {}
        _WATCHDOG.remove(self)
        for fut, _, name in pending.values():
            if not fut.done():
                fut.set_exception(self._lost_error(name))
        if self.on_lost is not None and not self.closing:
            try:
                self.on_lost(self, self.bye or self.lost)
            except Exception:
                pass

    def _expire(self, now):
        with self.lock:
            late = [rid for rid, (_, end, _) in self.pending.items() if end < now]
            entries = [self.pending.pop(rid) for rid in late]
        for fut, _, name in entries:
            if not fut.done():
                fut.set_exception(PsDeadlineError("%s did not answer '%s' within %.0fs (FLAGS_rpc_deadline + 20%%): "
                                                  "is it hung?" % (self.what, name, self.timeout)))

    def close(self, timeout=5.0):
        """Close the connection (the server sees it end: for a trainer, after its 'done')."""
        self.closing = True
        self.sender.flush(timeout)
        self.sender.close()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.reader.join(timeout=timeout)
        try:
            self.sock.close()
        except OSError:
            pass
        _WATCHDOG.remove(self)
