"""A faster interpreter exit for processes that loaded torch: at exit, freeze the garbage collector's
generations (gc.freeze) so that the final collections of interpreter shutdown do not walk torch's hundreds of
thousands of objects. Exiting a process that imported torch took 0.5-1 s of CPU here (2-4 s on a loaded
2-core machine), 1/3 of that with the freeze: a pserver job's every process pays it, and so do elastic
restarts and short jobs. Python does not promise __del__ for objects still alive at exit, and none of ours
relies on it (files, sockets and pservers are closed by close()/atexit handlers, which still run).
PADDLE_COMPAT_FULL_EXIT_GC=1 keeps the full collections."""

import atexit
import gc
import os

_installed = False


def _freeze():
    gc.freeze()


def install():
    """Register the freeze once per process (atexit runs it before the interpreter's own teardown)."""
    global _installed
    if _installed or os.environ.get("PADDLE_COMPAT_FULL_EXIT_GC", "") not in ("", "0"):
        return
    _installed = True
    atexit.register(_freeze)
