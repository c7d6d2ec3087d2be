"""Paddle 1.x's paddle.reader.decorator (also offered as fluid.io.batch, ...): composing Python sample
generators. The decorators that work in parallel (xmap_readers, multiprocess_reader) are in parallel.py.

    reader = fluid.io.batch(fluid.io.shuffle(my_reader, buf_size=500), batch_size=32)
"""

import itertools
import random

from .parallel import multiprocess_reader, xmap_readers

__all__ = ["batch", "shuffle", "buffered", "chain", "compose", "map_readers", "firstn", "cache",
           "ComposeNotAligned", "xmap_readers", "multiprocess_reader"]


def batch(reader, batch_size, drop_last=False):
    batch_size = int(batch_size)
    if batch_size <= 0:
        raise ValueError("batch_size should be a positive integer value, but got batch_size=%s" % batch_size)

    def batch_reader():
        b = []
        for instance in reader():
            b.append(instance)
            if len(b) == batch_size:
                yield b
                b = []
        if not drop_last and b:
            yield b
    return batch_reader


def shuffle(reader, buf_size):
    def data_reader():
        buf = []
        for e in reader():
            buf.append(e)
            if len(buf) >= buf_size:
                random.shuffle(buf)
                yield from buf
                buf = []
        if buf:
            random.shuffle(buf)
            yield from buf
    return data_reader


def buffered(reader, size):
    return reader   # reading ahead in a thread buys nothing for in-memory generators


def chain(*readers):
    def reader():
        return itertools.chain(*[r() for r in readers])
    return reader


class ComposeNotAligned(ValueError):
    """compose(..., check_alignment=True): the readers gave different numbers of samples."""


def compose(*readers, check_alignment=True):
    def make_tuple(x):
        return x if isinstance(x, tuple) else (x,)

    def reader():
        its = [r() for r in readers]
        for outputs in (itertools.zip_longest(*its) if check_alignment else zip(*its)):
            if check_alignment and any(o is None for o in outputs):
                raise ComposeNotAligned("compose: the readers are not aligned (one ended early)")
            yield sum((make_tuple(o) for o in outputs), ())
    return reader


def map_readers(func, *readers):
    def reader():
        for e in zip(*[r() for r in readers]):
            yield func(*e)
    return reader


def firstn(reader, n):
    def firstn_reader():
        # as Paddle 1.8: the sample after the n-th is still taken (then dropped) before stopping, so a
        # reader that draws random numbers per sample leaves `random` where Paddle's run leaves it
        for i, sample in enumerate(reader()):
            if i == n:
                return
            yield sample
    return firstn_reader


def cache(reader):
    all_data = tuple(reader())

    def cache_reader():
        return iter(all_data)
    return cache_reader
