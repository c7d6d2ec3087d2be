"""Keep freed large buffers in the process's heap for reuse (glibc malloc), as Paddle 1.8's own CPU allocator
keeps its chunks.

glibc serves an allocation of 32 MiB or more (less, before its threshold has adapted) with a fresh mmap and
returns it with munmap at free, so every step of a pserver job that moves large messages pays the kernel to
map, zero and fault in its receive buffers, the rows a pserver gathers and the trainer's gathered and merged
rows again: 30% of a distributed-table job's CPU at 65,536 rows x 64 (benchmarks/sparse_embedding.py).
retain_freed_memory() raises the mmap threshold to 1 GiB (larger blocks, e.g. a whole table, are still
mapped apart) and the trim threshold to 1 GiB (free memory at the heap's top is given back past that), so a
step's buffers are the previous step's. The process's resident size stays at its peak working set instead of
dropping between steps. PADDLE_COMPAT_RETAIN_FREED_MEMORY=0 leaves malloc as it is; elsewhere than glibc
it is a no-op.
"""

import ctypes
import os
import threading

__all__ = ["retain_freed_memory"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_LIMIT = 1 << 30
_done = []
_lock = threading.Lock()


def retain_freed_memory():
    """Once per process (pserver mode's trainer client and pserver service call it); True if malloc took it."""
    with _lock:
        if _done:
            return _done[0]
        ok = False
        if os.environ.get("PADDLE_COMPAT_RETAIN_FREED_MEMORY", "1") != "0":
            try:
                libc = ctypes.CDLL("libc.so.6")
                ok = bool(libc.mallopt(_M_MMAP_THRESHOLD, _LIMIT)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, _LIMIT))
            except (OSError, AttributeError):    # not glibc: its own policy stays
                ok = False
        _done.append(ok)
        return ok
