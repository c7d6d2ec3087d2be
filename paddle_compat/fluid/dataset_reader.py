"""QueueDataset reading in helper processes: each reads its share of the files, parses and batches them
(dataset_feed.queue_batches, batch_columns) and sends the numpy columns of each batch down a pipe, so
parsing runs beside the training step instead of taking turns with it for the GIL.

The helper is this file run as a script by the same interpreter. It loads only the numpy-only modules it
needs (dataset_feed, dataset_parse, dtypes), not the package and torch, so it starts in a fraction of a
second; idle helpers are kept for the next train_from_dataset. A helper that is abandoned mid-job (the
consumer stopped early) is killed rather than drained.
"""

import atexit
import os
import pickle
import subprocess
import sys
import threading

__all__ = ["batch_stream"]

_MAX_IDLE = 4
_idle = []
_lock = threading.Lock()
_F_SETPIPE_SZ = 1031   # Linux: a 1 MiB pipe lets a helper run a few batches ahead


class _Helper:
    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=1 << 16)
        try:
            import fcntl
            fcntl.fcntl(self.proc.stdout.fileno(), _F_SETPIPE_SZ, 1 << 20)
        except (ImportError, OSError):
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


def batch_stream(paths, pipe_command, slots, batch_size, timeout, drop_last=False):
    """dataset_feed.pack_batch of each batch of dataset_feed.queue_batches(...), computed in a helper
    process.
    Errors (a bad line, a failing pipe command) are raised here as the helper raised them."""
    try:
        h = _take()
    except OSError:   # no interpreter to start (an embedded Python): read here, on the caller's thread
        from .dataset_feed import pack_batch, queue_batches
        for rows in queue_batches(paths, pipe_command, slots, batch_size, timeout, drop_last):
            yield pack_batch(rows, slots)
        return
    done = False
    try:
        pickle.dump((list(paths), pipe_command, slots, batch_size, timeout, drop_last), h.proc.stdin,
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


def _serve():
    """The helper: one job after another from stdin until it closes."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)   # a stray print must not corrupt the batches on stdout
    inp = sys.stdin.buffer
    from paddle_compat.fluid.dataset_feed import pack_batch, queue_batches
    while True:
        try:
            paths, pipe_command, slots, batch_size, timeout, drop_last = pickle.load(inp)
        except EOFError:
            return
        try:
            for rows in queue_batches(paths, pipe_command, slots, batch_size, timeout, drop_last):
                pickle.dump(("batch", pack_batch(rows, slots)), out, protocol=pickle.HIGHEST_PROTOCOL)
                out.flush()
            msg = ("done", None)
        except Exception as e:  # noqa: BLE001  (sent to the parent, which raises it)
            msg = ("error", e)
        try:
            data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001
            data = pickle.dumps(("error", RuntimeError(str(msg[1]))))
        out.write(data)
        out.flush()


if __name__ == "__main__":
    # the numpy-only modules without the package's __init__ (which loads torch): bare package stubs
    import types
    fluid_dir = os.path.dirname(os.path.abspath(__file__))
    for name, path in (("paddle_compat", os.path.dirname(fluid_dir)), ("paddle_compat.fluid", fluid_dir)):
        mod = types.ModuleType(name)
        mod.__path__ = [path]
        sys.modules[name] = mod
    sys.path.pop(0)   # this file's directory: its modules are reached through the package only
    try:
        _serve()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
