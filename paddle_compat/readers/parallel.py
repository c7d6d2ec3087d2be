"""Reader decorators of Paddle 1.8's fluid.io that work in parallel: xmap_readers (threads) and
multiprocess_reader (processes); and default_collate_fn (DataLoader's batch collation)."""

import multiprocessing
import queue
import threading

import numpy as np

from ..ir.errors import EnforceNotMet  # Paddle raises its EnforceNotMet when a reader process fails

__all__ = ["xmap_readers", "multiprocess_reader", "default_collate_fn"]

_END = object()
# how long a consumer waits for the next item before checking its workers are still alive
_POLL_S = 1.0


def default_collate_fn(batch):
    """[[field1, field2, ...], ...] (one list per sample) -> [batch_field1, batch_field2, ...], each stacked."""
    if not batch:
        raise ValueError("default_collate_fn: the batch is empty")
    if isinstance(batch[0], np.ndarray):
        return [np.stack(batch, axis=0)]
    n = len(batch[0])
    for i, sample in enumerate(batch):
        if len(sample) != n:
            raise ValueError("default_collate_fn: sample %d has %d fields, sample 0 has %d" % (i, len(sample), n))
    return [np.stack([np.asarray(s[f]) for s in batch], axis=0) for f in range(n)]


def xmap_readers(mapper, reader, process_num, buffer_size, order=False):
    """Map `mapper` over `reader`'s samples with process_num threads; order=True keeps the input order."""
    if process_num < 1 or buffer_size < 1:
        raise ValueError("xmap_readers: process_num and buffer_size must be >= 1, got %r and %r"
                         % (process_num, buffer_size))

    def xreader():
        in_q, out_q = queue.Queue(buffer_size), queue.Queue(buffer_size)
        errors = []

        def feed():
            try:
                for i, sample in enumerate(reader()):
                    in_q.put((i, sample))
            except Exception as e:       # surfaced to the consumer below
                errors.append(e)
            for _ in range(process_num):
                in_q.put(_END)

        def work():
            while True:
                item = in_q.get()
                if item is _END:
                    out_q.put(_END)
                    return
                i, sample = item
                try:
                    out_q.put((i, mapper(sample)))
                except Exception as e:
                    errors.append(e)
                    out_q.put(_END)
                    return

        threads = [threading.Thread(target=feed, daemon=True)]
        threads += [threading.Thread(target=work, daemon=True) for _ in range(process_num)]
        for t in threads:
            t.start()
        finished, pending, want = 0, {}, 0
        while finished < process_num:
            item = out_q.get()
            if errors:
                raise errors[0]
            if item is _END:
                finished += 1
                continue
            if not order:
                yield item[1]
                continue
            pending[item[0]] = item[1]
            while want in pending:
                yield pending.pop(want)
                want += 1
        if errors:
            raise errors[0]
        for i in sorted(pending):
            yield pending[i]

    return xreader


def _check_sample(sample):
    if sample is None:
        raise ValueError("a reader yielded None (multiprocess_reader, as Paddle 1.8, refuses it)")


def _pump(reader, q):
    try:
        for sample in reader():
            _check_sample(sample)
            q.put(("sample", sample))
        q.put(("end", None))
    except Exception as e:
        q.put(("error", "%s: %s" % (type(e).__name__, e)))


def _pump_pipe(reader, conn):
    try:
        for sample in reader():
            _check_sample(sample)
            conn.send(("sample", sample))
        conn.send(("end", None))
    except Exception as e:
        conn.send(("error", "%s: %s" % (type(e).__name__, e)))
    finally:
        conn.close()


def _recv(conn, proc, k):
    """The next message from reader k's pipe; a reader process that died without finishing is an error."""
    while not conn.poll(_POLL_S):
        if not proc.is_alive() and not conn.poll(0):
            raise RuntimeError("multiprocess_reader: reader %d's process died without finishing" % k)
    try:
        return conn.recv()
    except EOFError:
        raise RuntimeError("multiprocess_reader: reader %d's process closed its pipe without finishing" % k)


def multiprocess_reader(readers, use_pipe=True, queue_size=1000):
    """Run each reader in its own process. use_pipe=True (the default): one pipe per reader, read in turn one
    sample from each live reader, as Paddle 1.8 does, so the order is fixed; use_pipe=False: one queue, samples
    in the order they arrive. Samples travel pickled (Paddle sent JSON, which turned tuples into lists and
    refused numpy arrays); a sample of None is refused, as in Paddle."""
    if not isinstance(readers, (list, tuple)) or not readers:
        raise ValueError("multiprocess_reader: readers must be a non-empty list of readers")

    def _stop(procs):
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join(timeout=5)

    def pipe_reader():
        ctx = multiprocessing.get_context("fork")
        conns, procs = [], []
        try:
            for r in readers:
                recv_end, send_end = ctx.Pipe(duplex=False)
                p = ctx.Process(target=_pump_pipe, args=(r, send_end), daemon=True)
                p.start()
                send_end.close()
                conns.append(recv_end)
                procs.append(p)
            live = list(range(len(readers)))
            while live:
                for k in list(live):    # one sample from each reader still live at the start of the round
                    kind, value = _recv(conns[k], procs[k], k)
                    if kind == "sample":
                        yield value
                    elif kind == "end":
                        live.remove(k)
                    else:
                        raise EnforceNotMet("multiprocess_reader: reader %d failed: %s" % (k, value))
        finally:
            for c in conns:
                c.close()
            _stop(procs)

    def queue_reader():
        ctx = multiprocessing.get_context("fork")
        q = ctx.Queue(queue_size)
        procs = [ctx.Process(target=_pump, args=(r, q), daemon=True) for r in readers]
        for p in procs:
            p.start()
        try:
            done = 0
            while done < len(procs):
                try:
                    kind, value = q.get(timeout=_POLL_S)
                except queue.Empty:
                    if not any(p.is_alive() for p in procs) and q.empty():
                        raise RuntimeError("multiprocess_reader: a reader process died without finishing")
                    continue
                if kind == "sample":
                    yield value
                elif kind == "end":
                    done += 1
                else:
                    raise EnforceNotMet("multiprocess_reader: a reader failed: %s" % value)
        finally:
            _stop(procs)

    return pipe_reader if use_pipe else queue_reader
