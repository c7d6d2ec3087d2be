"""QueueDataset reading in helper processes: each reads its share of the files, parses and batches them
(dataset_feed.queue_batches, batch_columns) and sends the numpy columns of each batch down a pipe, so
parsing runs beside the training step instead of taking turns with it for the GIL.

The helper is reader_helper.py run as a script by the same interpreter. It loads only the numpy-only modules it
needs (feed, parse and the IR's tensor holders), not the package and torch, so it starts in a fraction of a
second; idle helpers are kept for the next train_from_dataset. A helper that is abandoned mid-job (the
consumer stopped early) is killed rather than drained.
"""

import atexit
import os
import pickle
import subprocess
import sys
import threading

try:
    import fcntl
except ImportError:    # not a POSIX system: the pipe keeps its default size
    fcntl = None

from .feed import pack_batch, queue_batches

__all__ = ["batch_stream"]

_HELPER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reader_helper.py")

_MAX_IDLE = 4
_idle = []
_lock = threading.Lock()
_F_SETPIPE_SZ = 1031   # Linux: a 1 MiB pipe lets a helper run a few batches ahead


class _Helper:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, _HELPER_SCRIPT], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=1 << 16)
        if fcntl is not None:
            try:
                fcntl.fcntl(self.proc.stdout.fileno(), _F_SETPIPE_SZ, 1 << 20)
            except OSError:
                pass

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass


def _take():
    with _lock:
        while _idle:
            h = _idle.pop()
            if h.proc.poll() is None:
                return h
            h.kill()
    return _Helper()


def _give_back(h):
    with _lock:
        if len(_idle) < _MAX_IDLE:
            _idle.append(h)
            return
    h.kill()


@atexit.register
def _shutdown():
    with _lock:
        helpers = list(_idle)
        del _idle[:]
    for h in helpers:
        h.kill()


def batch_stream(paths, pipe_command, slots, batch_size, timeout, drop_last=False, opts=None):
    """dataset_feed.pack_batch of each batch of dataset_feed.queue_batches(...), computed in a helper
    process.
    Errors (a bad line, a failing pipe command) are raised here as the helper raised them."""
    opts_arg = (opts,) if opts is not None else ()
    try:
        h = _take()
    except OSError:   # no interpreter to start (an embedded Python): read here, on the caller's thread
        for rows in queue_batches(paths, pipe_command, slots, batch_size, timeout, drop_last, *opts_arg):
            yield pack_batch(rows, slots)
        return
    done = False
    try:
        pickle.dump((list(paths), pipe_command, slots, batch_size, timeout, drop_last, opts_arg), h.proc.stdin,
                    protocol=pickle.HIGHEST_PROTOCOL)
        h.proc.stdin.flush()
        while True:
            try:
                kind, value = pickle.load(h.proc.stdout)
            except EOFError:
                raise RuntimeError("dataset: the reader process for %s exited (status %s)"
                                   % (paths, h.proc.wait())) from None
            if kind == "batch":
                yield value
            elif kind == "done":
                done = True
                return
            else:
                done = True
                raise value
    finally:
        if done:
            _give_back(h)
        else:
            h.kill()
