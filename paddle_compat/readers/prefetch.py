"""A bounded prefetch queue filled by a background thread: what `capacity` means on a DataLoader/PyReader.

Paddle 1.8 runs a reader's Python generator in a thread that fills a blocking queue of `capacity` batches while
the executor trains. Here too: the thread turns samples into LoDTensors (DataFeeder work, numpy copies, file
reads) while the training thread is inside torch kernels, which release the GIL, so the two overlap.

Differences from Paddle, on purpose:
- an exception raised by the user's generator is re-raised in the training thread with its original traceback
  (Paddle 1.8 logged it from the reader thread and the main thread saw only an EOF or a hang);
- every wait has a deadline (`FLAGS_reader_queue_timeout_ms`, default 10 minutes: a generator that yields
  nothing for that long is reported by name instead of blocking forever).
"""

import os
import queue
import threading

_DONE = object()


def _timeout_s():
    return float(os.environ.get("FLAGS_reader_queue_timeout_ms", "600000")) / 1000.0


class _Failure:
    def __init__(self, exc):
        self.exc = exc


class Prefetcher:
    """Iterates `source` (an iterator) in a daemon thread, keeping up to `capacity` items ready.

    close() stops the thread (it is also called when the consumer stops early), so a loader can be reset
    mid-pass without leaking a blocked producer."""

    def __init__(self, source, capacity, name="DataLoader"):
        self._q = queue.Queue(maxsize=max(1, int(capacity)))
        self._stop = threading.Event()
        self._name = name
        self.produced = 0          # items handed to the queue so far (tests look at how far it ran ahead)
        self._thread = threading.Thread(target=self._run, args=(source,), name="%s-prefetch" % name, daemon=True)
        self._thread.start()

    def _put(self, item):
        while not self._stop.is_set():
            try:
                self._q.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, source):
        try:
            for item in source:
                if not self._put(item) or self._stop.is_set():
                    return
                self.produced += 1
            self._put(_DONE)
        except BaseException as e:   # handed to the consumer, re-raised there
            self._put(_Failure(e))
        finally:
            close = getattr(source, "close", None)
            if close is not None and self._stop.is_set():
                try:
                    close()
                except Exception:   # a generator already running in this thread cannot be closed: ignore
                    pass

    def __iter__(self):
        return self

    def __next__(self):
        if self._q is None:
            raise StopIteration
        deadline = _timeout_s()
        try:
            item = self._q.get(timeout=deadline)
        except queue.Empty:
            self.close()
            raise TimeoutError("%s: the data generator produced no batch for %.0f s (FLAGS_reader_queue_timeout_ms);"
                               " is it blocked?" % (self._name, deadline)) from None
        if item is _DONE:
            self._q = None
            self._thread.join(timeout=5)
            raise StopIteration
        if isinstance(item, _Failure):
            self._q = None
            raise item.exc
        return item

    def close(self):
        self._stop.set()
        q, self._q = self._q, None
        if q is not None:
            try:       # unblock a producer waiting on a full queue
                while True:
                    q.get_nowait()
            except queue.Empty:
                pass
        # no join: the producer sees the stop flag at its next put (50 ms) and ends; a generator stuck in
        # user code must not block reset()

    def __del__(self):
        try:
            self._stop.set()
        except Exception:
            pass
