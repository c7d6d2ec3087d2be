"""Reader decorators Paddle keeps in paddle.reader.decorator beyond fluid.io's: xmap_readers and friends."""

import queue
import threading

from ..fluid.reader_decorator import batch, buffered, cache, chain, compose, firstn, map_readers, shuffle  # noqa: F401


class ComposeNotAligned(ValueError):
    pass


_END = object()


def xmap_readers(mapper, reader, process_num, buffer_size, order=False):
    """Map the samples of `reader` with `mapper` on `process_num` threads; `order=True` keeps reader order."""
    process_num = max(1, int(process_num))

    def xreader():
        in_q = queue.Queue(buffer_size)
        out_q = queue.Queue(buffer_size)
        errors = []

        def feed():
            try:
                for i, s in enumerate(reader()):
                    in_q.put((i, s))
            except BaseException as e:   # surfaces in the consumer instead of hanging it
                errors.append(e)
            for _ in range(process_num):
                in_q.put(_END)

        def work():
            while True:
                item = in_q.get()
                if item is _END:
                    out_q.put(_END)
                    return
                try:
                    out_q.put((item[0], mapper(item[1])))
                except BaseException as e:
                    errors.append(e)
                    out_q.put(_END)
                    return

        threads = [threading.Thread(target=feed, daemon=True)]
        threads += [threading.Thread(target=work, daemon=True) for _ in range(process_num)]
        for t in threads:
            t.start()
        finished, pending, next_i = 0, {}, 0
        while finished < process_num:
            item = out_q.get()
            if item is _END:
                finished += 1
                continue
            if errors:
                break
            if not order:
                yield item[1]
                continue
            pending[item[0]] = item[1]
            while next_i in pending:
                yield pending.pop(next_i)
                next_i += 1
        if errors:
            raise errors[0]
        for i in sorted(pending):
            yield pending[i]
    return xreader


def multiprocess_reader(readers, use_pipe=True, queue_size=1000):
    """Samples of several readers, interleaved.  Runs them in threads of this process: the samples are the
    same as Paddle's forked readers give (in some interleaving), without fork's cost or its pitfalls."""
    def reader():
        q = queue.Queue(queue_size)
        errors = []

        def run(r):
            try:
                for s in r():
                    q.put(s)
            except BaseException as e:
                errors.append(e)
            q.put(_END)

        for r in readers:
            threading.Thread(target=run, args=(r,), daemon=True).start()
        done = 0
        while done < len(readers):
            s = q.get()
            if s is _END:
                done += 1
            else:
                yield s
        if errors:
            raise errors[0]
    return reader
