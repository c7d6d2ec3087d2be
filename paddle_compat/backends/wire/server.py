"""A listener of the wire transport: bound to exactly the configured host:port, an accept loop that never dies,
one thread per connection (handshake, then frames), handlers dispatched by name.

A handler is `fn(*args) -> value or torch.futures.Future`: a Future is answered when it completes (the sync
barrier answers every trainer when the last gradients are in, without holding a reading thread). An
exception, raised or set on the Future, travels back as a WireError of its kind (codec.ERROR_KINDS; other
kinds as RuntimeError naming the type). The owner learns when an admitted peer's connection closes
(`on_close(member, peer, reason)`): the liveness signal, at once for a process that dies (kill -9 too), within
~30 s (TCP keepalive) for a host that vanishes.

Unauthenticated connections: at most MAX_PREAUTH handshaking at once (more are closed at accept), each
bounded by auth.PREAUTH_S and auth.HELLO_MAX; refusals are logged with the peer's ip:port and why, at most
LOG_BURST lines per LOG_WINDOW_S (then a count), so a port scanner cannot flood the log.
"""

import atexit
import errno
import logging
import socket
import threading
import time
import weakref

from . import auth, codec, frame

__all__ = ["Server", "bind", "MAX_PREAUTH"]

MAX_PREAUTH = 64
LOG_BURST = 50
LOG_WINDOW_S = 10.0
_LOG = logging.getLogger("paddle_compat.wire")


def _split(endpoint):
    host, _, port = endpoint.rpartition(":")
    return host.strip("[]"), int(port)


def bind(endpoint, backlog=128):
    """A listening socket on exactly endpoint's literal address (127.0.0.2 and other secondary addresses
    included: no interface lookup). OSError if the port is taken or the address is not this host's."""
    host, port = _split(endpoint)
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        s.listen(backlog)
    except BaseException:
        s.close()
        raise
    return s


def _addr(a):
    return "%s:%d" % (a[0], a[1]) if isinstance(a, tuple) and len(a) >= 2 else str(a)


def error_kind(exc):
    """(kind in ERROR_KINDS, message) for an exception answered over the wire."""
    for cls in type(exc).__mro__:
        if cls.__name__ in codec.ERROR_KINDS and cls.__name__ != "RuntimeError":
            return cls.__name__, str(exc)
        if cls is RuntimeError:
            break
    if isinstance(exc, RuntimeError) and type(exc) is RuntimeError:
        return "RuntimeError", str(exc)
    return "RuntimeError", "%s: %s" % (type(exc).__name__, exc)


class _RateLog:
    def __init__(self):
        self.lock = threading.Lock()
        self.window = 0.0
        self.count = 0
        self.dropped = 0

    def warn(self, msg, *args):
        now = time.monotonic()
        with self.lock:
            if now - self.window > LOG_WINDOW_S:
                if self.dropped:
                    _LOG.warning("... and %d more refused connections in the last %.0fs (not logged one by one)",
                                 self.dropped, LOG_WINDOW_S)
                self.window, self.count, self.dropped = now, 0, 0
            self.count += 1
            if self.count > LOG_BURST:
                self.dropped += 1
                return
        _LOG.warning(msg, *args)


class _Conn:
    def __init__(self, sock, peer):
        self.sock, self.peer = sock, peer
        self.sender = frame.Sender(sock)
        self.member = None
        self.identity = None
        self.closed = False

    def send(self, kind, rid, value):
        try:
            meta, bufs = codec.encode(value)
        except codec.EncodeError as e:
            kind, (meta, bufs) = frame.ERROR, codec.encode(codec.WireError("RuntimeError", "the answer cannot "
                                                                           "travel: %s" % e))
        try:
            self.sender.send(kind, rid, meta, bufs)
        except OSError:
            pass     # the peer is gone: its reading thread reports that


class Server:
    """Listen on `endpoint` (or take the bound socket `sock`), authenticate with `key` (default: the process's
    job key), and once `serve()` is called, dispatch requests to `handlers` (a dict, name -> fn)."""

    def __init__(self, endpoint, name, identity, handlers, admit=None, on_close=None, sock=None, key=None,
                 serve=True, preauth_s=None):
        self.name = name
        self.identity = identity
        self.handlers = handlers
        self.admit_fn, self.on_close = admit, on_close
        self.key = key if key is not None else auth.process_key()[0]
        self.preauth_s = auth.PREAUTH_S if preauth_s is None else preauth_s
        self.sock = sock if sock is not None else bind(endpoint)
        self.address = self.sock.getsockname()[:2]
        self.endpoint = _addr(self.address)
        self.log = _RateLog()
        self.refusals = []            # (peer, reason): tests read it
        self.lock = threading.Lock()
        self.conns = set()
        self.preauth = 0
        self.closing = False
        self.ready = threading.Event()
        if serve:
            self.ready.set()
        self.idle = threading.Condition(self.lock)
        self.thread = threading.Thread(target=self._accept_loop, daemon=True, name="wire-accept %s" % self.endpoint)
        self.thread.start()
        _LIVE.add(self)

    # ---------------------------------------------------------------------------------------------------
    def serve(self):
        """Start answering requests (connections made earlier were authenticated and have waited)."""
        self.ready.set()

    def _refuse(self, peer, reason):
        self.refusals.append((peer, reason))
        if len(self.refusals) > 1000:
            del self.refusals[:500]
        self.log.warn("%s refused a connection from %s: %s", self.name, peer, reason)

    def _accept_loop(self):
        backoff = 0.05
        listener = self.sock
        while not self.closing:
            try:
                conn, addr = listener.accept()
                backoff = 0.05
            except OSError as e:
                if self.closing or self.sock is None:
                    return
                if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self.log.warn("%s cannot accept a connection: %s; retrying in %.2fs", self.name, e, backoff)
                    time.sleep(backoff)
                    backoff = min(backoff * 2, 1.0)
                elif e.errno not in (errno.ECONNABORTED, errno.EINTR, errno.EAGAIN, errno.EPROTO):
                    self.log.warn("%s: accept failed: %s", self.name, e)
                    time.sleep(0.01)
                continue
            except Exception as e:      # never let the accept loop die
                self.log.warn("%s: accept failed: %s: %s", self.name, type(e).__name__, e)
                time.sleep(0.01)
                continue
            peer = _addr(addr)
            with self.lock:
                full = self.preauth >= MAX_PREAUTH
                if not full:
                    self.preauth += 1
            if full:
                self._refuse(peer, "too many connections handshaking at once (%d)" % MAX_PREAUTH)
                _close(conn)
                continue
            try:
                threading.Thread(target=self._connection, args=(conn, peer), daemon=True,
                                 name="wire-conn %s" % peer).start()
            except Exception as e:
                with self.lock:
                    self.preauth -= 1
                self._refuse(peer, "no thread for it (%s)" % e)
                _close(conn)

    def _connection(self, sock, peer):
        c = _Conn(sock, peer)
        admitted = False
        try:
            frame.tune(sock)
            try:
                c.identity, c.member = auth.server_handshake(sock, self.key, self.identity,
                                                             lambda ident: self._admit(ident, peer), self.preauth_s)
                admitted = True
            except auth.HandshakeError as e:
                self._refuse(peer, e.reason)
                return
            except Exception as e:
                self._refuse(peer, "handshake failed: %s: %s" % (type(e).__name__, e))
                return
            finally:
                with self.lock:
                    self.preauth -= 1
            with self.lock:
                if self.closing:
                    return
                self.conns.add(c)
            reason = self._frames(c)
        finally:
            c.sender.close()
            _close(sock)
            if admitted:
                with self.lock:
                    self.conns.discard(c)
                    self.idle.notify_all()
                if self.on_close is not None:
                    try:
                        self.on_close(c.member, peer, reason if not self.closing else "this side closed")
                    except Exception as e:
                        _LOG.warning("%s: on_close for %s failed: %s: %s", self.name, peer, type(e).__name__, e)

    def _admit(self, identity, peer):
        if self.admit_fn is None:
            return None
        return self.admit_fn(identity, peer)

    def _frames(self, c):
        """Read and dispatch until the connection ends; returns why it ended."""
        while not self.ready.wait(1.0):
            if self.closing:
                return "this side closed"
        reader = frame.FrameReader(c.sock)
        while True:
            try:
                kind, rid, meta, bufs = reader.read()
            except EOFError:
                return "connection closed"
            except frame.FrameError as e:
                self._refuse(c.peer, "%s sent a malformed frame: %s" % (c.identity, e))
                return "malformed frame: %s" % e
            except OSError as e:
                return "connection broke (%s)" % (e.strerror or e)
            except MemoryError:
                self._refuse(c.peer, "%s sent a frame too large to receive" % c.identity)
                return "frame too large"
            if kind != frame.REQUEST:
                self._refuse(c.peer, "%s sent a frame of kind %d, not a request" % (c.identity, kind))
                return "unexpected frame kind"
            try:
                msg = codec.decode(meta, bufs)
                if type(msg) is not tuple or len(msg) != 2 or type(msg[0]) is not str or type(msg[1]) is not tuple:
                    raise codec.DecodeError("a request is (handler name, args tuple), got %s"
                                            % type(msg).__name__)
            except codec.DecodeError as e:
                self._refuse(c.peer, "%s sent an undecodable request: %s" % (c.identity, e))
                c.send(frame.ERROR, rid, codec.WireError("DecodeError", "%s refused the request: %s" % (self.name, e)))
                continue
            self._dispatch(c, rid, msg[0], msg[1])

    def _dispatch(self, c, rid, name, args):
        fn = self.handlers.get(name)
        if fn is None:
            c.send(frame.ERROR, rid, codec.WireError(
                "RuntimeError", "%s has no handler '%s' (known: %s)" % (self.name, name,
                                                                        ", ".join(sorted(self.handlers)) or "none")))
            return
        try:
            out = fn(*args)
        except Exception as e:
            c.send(frame.ERROR, rid, codec.WireError(*error_kind(e)))
            return
        add_cb = getattr(out, "add_done_callback", None)
        if add_cb is not None and hasattr(out, "wait"):       # a torch.futures.Future
            add_cb(lambda f: self._answer_future(c, rid, f))
        else:
            c.send(frame.REPLY, rid, out)

    @staticmethod
    def _answer_future(c, rid, f):
        try:
            value = f.value()
        except Exception as e:
            c.send(frame.ERROR, rid, codec.WireError(*error_kind(e)))
            return
        c.send(frame.REPLY, rid, value)

    # ---------------------------------------------------------------------------------------------------
    def members(self):
        with self.lock:
            return [(c.member, c.peer) for c in self.conns]

    def wait_idle(self, timeout):
        """Wait (bounded) until every admitted connection has closed: the peers got our last answers."""
        end = time.monotonic() + timeout
        with self.lock:
            while self.conns and time.monotonic() < end:
                self.idle.wait(min(0.1, max(0.0, end - time.monotonic())))
            return not self.conns

    def stop_listening(self):
        """Accept no more connections (a serving that is ending: a trainer of the script's next job then finds
        the port closed and retries until the next serving listens); the admitted ones go on."""
        with self.lock:
            if self.closing or self.sock is None:
                return
            sock, self.sock = self.sock, None
            self.listening_closed = True
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        _close(sock)

    def close(self, reason=None):
        """Stop listening; tell every connected peer `reason` (a failure) and close its connection."""
        with self.lock:
            if self.closing:
                return
            self.closing = True
            conns = list(self.conns)
        self.ready.set()
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            _close(self.sock)
        end = time.monotonic() + 2.0
        for c in conns:
            c.send(frame.BYE, 0, reason)
            c.sender.flush(max(0.0, end - time.monotonic()))    # our last answers first
            try:
                c.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _close(sock):
    try:
        sock.close()
    except OSError:
        pass


# Servers still open when the interpreter exits are closed before its teardown: a daemon thread of ours still
# reading a socket when Python finalizes is stopped by pthread_exit, which with torch loaded aborts the process
# about one exit in four ("terminate called without an active exception", status 134) -- a finished job would
# report failure. atexit runs before that teardown.
_LIVE = weakref.WeakSet()


def _close_all_at_exit():
    servers = list(_LIVE)
    for srv in servers:
        try:
            srv.close()
        except Exception:
            pass
    end = time.monotonic() + 2.0
    for srv in servers:
        srv.thread.join(max(0.0, end - time.monotonic()))
        srv.wait_idle(max(0.0, end - time.monotonic()))


atexit.register(_close_all_at_exit)
