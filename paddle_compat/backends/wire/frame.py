"""Frames on a connected socket (after the handshake):

    header  magic "PCW1", version, kind, flags, request id, meta length, buffer count   (HEADER, 24 bytes)
    lengths buffer count x uint64
    meta    the codec's meta bytes
    buffers each buffer's bytes, in order

Sent with sendmsg scatter-gather (tensor bytes are never copied into one message), without waiting for the
peer (Sender: what the kernel does not take at once a writer thread finishes); received into buffers
allocated at their declared sizes (torch.empty, so a tensor is a view of what arrived). Every declared size is
checked against the limits before anything is allocated: a frame declaring a 2^62-byte buffer is refused
with FrameError, not attempted.
"""

import collections
import socket
import struct
import threading
import time

from ...ir.lazy import torch

__all__ = ["REQUEST", "REPLY", "ERROR", "BYE", "FrameError", "send_frame", "Sender", "FrameReader", "MAX_META",
           "MAX_BUFFERS", "MAX_FRAME_BYTES"]

MAGIC = b"PCW1"
VERSION = 1
REQUEST, REPLY, ERROR, BYE = 1, 2, 3, 4
KINDS = (REQUEST, REPLY, ERROR, BYE)
HEADER = struct.Struct("<4sBBHQII")
MAX_META = 64 << 20
MAX_BUFFERS = 1 << 16
MAX_FRAME_BYTES = 1 << 36       # 64 GiB: a whole table shard in one pull fits; 2^62 does not
_IOV_MAX = 512
_SCRATCH = 1 << 16


class FrameError(ConnectionError):
    """Bytes on an authenticated connection that are not a frame (or exceed the limits); the connection is
    closed."""


def frame_parts(kind, rid, meta, buffers=()):
    """A frame as a list of memoryviews: header, lengths and meta in one, then each non-empty buffer."""
    lens = [b.nbytes for b in buffers]
    head = HEADER.pack(MAGIC, VERSION, kind, 0, rid, len(meta), len(lens))
    if lens:
        head += struct.pack("<%dQ" % len(lens), *lens)
    return [memoryview(head + meta)] + [b if b.format == "B" else b.cast("B") for b in buffers if b.nbytes]


def send_frame(sock, kind, rid, meta, buffers=()):
    """Send a whole frame, blocking (tests, and the writer thread of a Sender)."""
    if _send_some(sock, frame_parts(kind, rid, meta, buffers), 0):
        raise AssertionError("a blocking send returned early")


def _send_some(sock, views, flags):
    """Send views (a list, consumed in place) until done, or (flags=MSG_DONTWAIT) until the kernel takes no
    more; returns what is left."""
    while views:
        try:
            sent = sock.sendmsg(views[:_IOV_MAX], [], flags)
        except BlockingIOError:
            return views
        while sent:
            n = views[0].nbytes
            if sent >= n:
                sent -= n
                views.pop(0)
            else:
                views[0] = views[0][sent:]
                sent = 0
    return views


class Sender:
    """Frames out on one socket, in order. Each is first handed to the kernel without waiting (MSG_DONTWAIT);
    what it does not take at once is finished by this connection's writer thread, so a caller never waits
    for its peer to read (a trainer's pushes to several pservers go out side by side, and a pserver answers
    every trainer of a sync step at once)."""

    def __init__(self, sock):
        self.sock = sock
        self.cond = threading.Condition()
        self.queue = collections.deque()
        self.thread = None
        self.error = None
        self.closed = False

    def send(self, kind, rid, meta, buffers=()):
        views = frame_parts(kind, rid, meta, buffers)
        with self.cond:
            if self.error is not None:
                raise self.error
            if not self.queue:
                views = _send_some(self.sock, views, socket.MSG_DONTWAIT)
                if not views:
                    return
            self.queue.append(views)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, daemon=True, name="wire-writer")
                self.thread.start()
            self.cond.notify_all()

    def _run(self):
        while True:
            with self.cond:
                while not self.queue and not self.closed:
                    self.cond.wait()
                if not self.queue:
                    return
                views = self.queue[0]
            try:
                _send_some(self.sock, views, 0)
            except OSError as e:
                with self.cond:
                    self.error = e
                    self.queue.clear()
                    self.cond.notify_all()
                return
            with self.cond:
                self.queue.popleft()
                self.cond.notify_all()

    def flush(self, timeout):
        """Wait (bounded) until everything queued is in the kernel."""
        end = time.monotonic() + timeout
        with self.cond:
            while self.queue and self.error is None and time.monotonic() < end:
                self.cond.wait(max(0.0, min(0.1, end - time.monotonic())))
            return not self.queue

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify_all()


class FrameReader:
    """Reads frames from one socket, through a small scratch buffer (a header, its meta and small buffers
    usually arrive in one recv) and straight into large buffers."""

    def __init__(self, sock):
        self.sock = sock
        self.scratch = bytearray(_SCRATCH)
        self.view = memoryview(self.scratch)
        self.start = self.end = 0

    def _recv_more(self):
        """More bytes into the scratch buffer (compacted first when its tail is full)."""
        if self.start == self.end:
            self.start = self.end = 0
        elif self.end == len(self.scratch):
            m = self.end - self.start
            self.scratch[:m] = self.scratch[self.start:self.end]
            self.start, self.end = 0, m
        got = self.sock.recv_into(self.view[self.end:])
        if not got:
            raise EOFError("connection closed")
        self.end += got

    def _read(self, n):
        if n > len(self.scratch) // 2:
            out = bytearray(n)
            self._read_into(memoryview(out))
            return bytes(out)
        while self.end - self.start < n:
            if self.start + n > len(self.scratch):
                m = self.end - self.start
                self.scratch[:m] = self.scratch[self.start:self.end]
                self.start, self.end = 0, m
            self._recv_more()
        data = bytes(self.view[self.start:self.start + n])
        self.start += n
        return data

    def _read_into(self, mv):
        n = mv.nbytes
        pos = min(self.end - self.start, n)
        if pos:
            mv[:pos] = self.view[self.start:self.start + pos]
            self.start += pos
        while pos < n:
            if n - pos < len(self.scratch) // 4:      # a small rest: through the scratch buffer
                self._recv_more()
                take = min(self.end - self.start, n - pos)
                mv[pos:pos + take] = self.view[self.start:self.start + take]
                self.start += take
                pos += take
                continue
            got = self.sock.recv_into(mv[pos:])
            if not got:
                raise EOFError("connection closed")
            pos += got

    def read(self):
        """(kind, request id, meta bytes, [buffers as torch uint8 tensors]). EOFError when the peer closed."""
        magic, version, kind, _flags, rid, meta_len, nbufs = HEADER.unpack(self._read(HEADER.size))
        if magic != MAGIC:
            raise FrameError("not a frame (magic %r)" % magic)
        if version != VERSION or kind not in KINDS:
            raise FrameError("frame version %d kind %d not understood" % (version, kind))
        if meta_len > MAX_META:
            raise FrameError("frame declares %d bytes of meta (at most %d)" % (meta_len, MAX_META))
        if nbufs > MAX_BUFFERS:
            raise FrameError("frame declares %d buffers (at most %d)" % (nbufs, MAX_BUFFERS))
        lens = struct.unpack("<%dQ" % nbufs, self._read(8 * nbufs)) if nbufs else ()
        total = sum(lens)
        if total > MAX_FRAME_BYTES:
            raise FrameError("frame declares %d bytes of buffers (at most %d)" % (total, MAX_FRAME_BYTES))
        meta = self._read(meta_len)
        bufs = []
        if nbufs:
            for n in lens:
                t = torch.empty(n, dtype=torch.uint8)
                if n:
                    self._read_into(memoryview(t.numpy()))
                bufs.append(t)
        return kind, rid, meta, bufs


def tune(sock):
    """Low latency and a short keepalive on every connection: a vanished host is noticed in ~30 s."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if hasattr(socket, "TCP_KEEPIDLE"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 10)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 5)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 4)
    except OSError:
        pass
