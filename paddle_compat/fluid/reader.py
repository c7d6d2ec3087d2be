"""DataLoader.from_generator and PyReader: feeding a program from a Python generator.

iterable=True: `for data in loader(): exe.run(prog, feed=data, ...)`, each `data` a list with one feed
dict (or list of LoDTensors, return_list=True) per place.
iterable=False: the loader puts a `read` op at the head of the main program; after `loader.start()` each
`exe.run(prog)` takes the next batch, and the run after the last batch raises fluid.core.EOFException;
`loader.reset()` ends the pass. With `capacity` set (Paddle requires it), a background thread makes up to
`capacity` batches ahead (readers/prefetch.py), overlapping the generator and feeding with training; with
capacity=None batches are made on demand in the calling thread. `use_double_buffer` is Paddle's second,
device-side buffer: on CPU there is no copy to overlap, so it is accepted and changes nothing.
"""

import collections
import itertools
import threading
import time

from ..backends.loaders import register_loader
from ..ir import CPUPlace, EOFException, LoDTensor, Place, Variable, VarType, notify_changed, unique_name
from .data_feeder import DataFeeder
from ..readers.parallel import default_collate_fn
from ..readers.prefetch import Prefetcher, _timeout_s
from .executor.dataset_run import DatasetLoader
from .reader_base import DataLoaderBase, keep_data_loader_order  # noqa: F401  (fluid.reader's names)

__all__ = ["DataLoader", "PyReader", "GeneratorLoader", "default_collate_fn"]

_ids = itertools.count()


def _batched(sample_reader, batch_size, drop_last):
    batch_size = int(batch_size)
    if batch_size <= 0:
        raise ValueError("batch_size must be a positive int, got %s" % batch_size)

    def reader():
        batch = []
        for sample in sample_reader():
            batch.append(sample)
            if len(batch) == batch_size:
                yield batch
                batch = []
        if batch and not drop_last:
            yield batch
    return reader


class GeneratorLoader(DataLoaderBase):
    """What DataLoader.from_generator returns."""

    def __init__(self, feed_list=None, capacity=None, use_double_buffer=True, iterable=True, return_list=False,
                 drop_last=True):
        if not feed_list:
            raise ValueError("DataLoader.from_generator: feed_list (the data Variables to feed) is required")
        for v in feed_list:
            if not isinstance(v, Variable):
                raise TypeError("DataLoader.from_generator: feed_list must hold Variables, got %r" % (v,))
        if capacity is not None and int(capacity) <= 0:
            raise ValueError("DataLoader.from_generator: capacity must be positive, got %s" % capacity)
        self._feed_list = list(feed_list)
        self._capacity = None if capacity is None else int(capacity)
        self._iterable = bool(iterable)
        self._return_list = bool(return_list)
        self._drop_last = bool(drop_last)
        self._use_double_buffer = bool(use_double_buffer)
        self._batch_reader = None      # () -> iterator of per-batch feed dicts {name: LoDTensor}
        self._places = None
        self._it = None                # non-iterable: the running pass
        self._state = "idle"           # idle | running | exhausted
        self._queue = None             # the queue scripts may push batches into (property queue)
        self._id = "py_reader_%d" % next(_ids)
        register_loader(self._id, self)   # the read kernel finds this loader by the op's reader_id
        if not self._iterable:
            self._add_read_op(self._feed_list[0].block.program)

    @property
    def queue(self):
        """Paddle's blocking queue between the reader thread and the read op: scripts log its size(), or
        push batches into it themselves (_BlockingQueue). Batches of a data source are read when the read
        op asks (or by the prefetch thread), not through it, so with one its size() is 0."""
        if self._queue is None:
            self._queue = _BlockingQueue(self)
        return self._queue

    # data sources ----------------------------------------------------------------------------------
    @property
    def iterable(self):
        return self._iterable

    def _feeder(self, place):
        return DataFeeder(self._feed_list, place or CPUPlace(), program=self._feed_list[0].block.program)

    def set_sample_generator(self, reader, batch_size, drop_last=True, places=None):
        """reader() yields samples (one field per feed variable); they are batched here."""
        return self.set_sample_list_generator(_batched(reader, batch_size, drop_last), places)

    def set_sample_list_generator(self, reader, places=None):
        """reader() yields lists of samples (one minibatch each)."""
        self._places = self._check_places(places)
        feeder = self._feeder(self._places[0])

        def batches():
            for samples in reader():
                yield feeder.feed(samples)
        self._batch_reader = batches
        return self

    def set_batch_generator(self, reader, places=None):
        """reader() yields one minibatch at a time: a list/tuple of numpy arrays or LoDTensors, one per feed
        variable in feed_list order (LoD variables need LoDTensors)."""
        self._places = self._check_places(places)
        place = self._places[0]
        names = [v.name for v in self._feed_list]

        def batches():
            for fields in reader():
                if isinstance(fields, dict) or len(fields) != len(names):
                    raise ValueError("DataLoader batch generator: expected a list of %d arrays (%s) per batch, "
                                     "got %r" % (len(names), ", ".join(names), type(fields).__name__))
                out = {}
                for n, f in zip(names, fields):
                    if isinstance(f, LoDTensor):
                        out[n] = f
                    else:
                        t = LoDTensor()
                        t.set(f, place)
                        out[n] = t
                yield out
        self._batch_reader = batches
        return self

    def _check_places(self, places):
        if places is None:
            return [CPUPlace()]
        if isinstance(places, Place):
            return [places]
        places = list(places)
        if not places or not all(isinstance(p, Place) for p in places):
            raise TypeError("DataLoader: places must be a Place or a non-empty list of Places, got %r" % (places,))
        return places

    def _batches(self):
        if self._batch_reader is None:
            raise RuntimeError("DataLoader has no data source: call set_sample_generator, "
                               "set_sample_list_generator or set_batch_generator first")
        batches = self._batch_reader()
        if self._capacity is None:
            return batches
        return Prefetcher(iter(batches), self._capacity, name="DataLoader(%s)" % self._id)

    def _shape(self, feed):
        if self._return_list:
            return [feed[v.name] for v in self._feed_list]
        return feed

    # iterable mode ---------------------------------------------------------------------------------
    def __call__(self):
        self._live_iter = iter(self)
        return self._live_iter

    def _reset(self):
        """Ends the pass a `for data in loader()` left early (Paddle's loader._reset()): the next loader()
        starts from the generator's beginning and stops the prefetch thread of the old pass now."""
        it, self._live_iter = getattr(self, "_live_iter", None), None
        if it is not None:
            it.close()
        if not self._iterable:
            self._close_it()
            self._state = "idle"

    def __iter__(self):
        if not self._iterable:
            raise RuntimeError("this DataLoader was made with iterable=False: call start() and run the program "
                               "until fluid.core.EOFException instead of iterating it")
        n = len(self._places or [None])
        group = []
        batches = self._batches()
        try:
            for feed in batches:
                group.append(self._shape(feed))
                if len(group) == n:
                    yield group
                    group = []
            if group and not self._drop_last:
                yield group
        finally:    # the loop may be left early (break): stop the prefetch thread
            close = getattr(batches, "close", None)
            if close is not None:
                close()

    # non-iterable mode -----------------------------------------------------------------------------
    def _add_read_op(self, program):
        block = program.global_block()
        reader = block.create_var(name=unique_name.generate("create_py_reader"), type=VarType.READER,
                                  persistable=True, stop_gradient=True)
        read_from = reader
        if self._use_double_buffer:
            # Paddle wraps the reader in a double-buffered one ahead of `read`; programs (and
            # Program._inference_optimize(prune_read_op=False)) see that op.  Our loader prefetches on a
            # thread already, so the op does nothing here.
            read_from = block.create_var(name=unique_name.generate("double_buffer"), type=VarType.READER,
                                         persistable=True, stop_gradient=True)
        block._prepend_op(type="read", inputs={"Reader": [read_from]}, outputs={"Out": self._feed_list},
                          attrs={"reader_id": self._id, "drop_last": self._drop_last})
        if self._use_double_buffer:
            block._prepend_op(type="create_double_buffer_reader", inputs={"UnderlyingReader": [reader]},
                              outputs={"Out": [read_from]}, attrs={"place": "AUTO"})
        notify_changed(program, "read")
        self._reader_var = read_from

    def start(self):
        if self._iterable:
            raise RuntimeError("start() is for DataLoaders made with iterable=False; iterate this one instead")
        if self._state == "running":
            raise RuntimeError("DataLoader.start(): already started; call reset() after EOFException first")
        self._it = iter(self._batches())
        self._state = "running"

    def _feeding_thread(self):
        """The thread making this pass's batches (the prefetch thread; a finished one when batches are
        made on demand)."""
        t = getattr(self._it, "_thread", None)
        if t is None:
            t = threading.Thread(target=lambda: None, name="%s-feed" % self._id, daemon=True)
            t.start()
        return t

    def _close_it(self):
        close = getattr(self._it, "close", None)
        if close is not None:
            close()
        self._it = None

    def reset(self):
        if self._iterable:
            raise RuntimeError("reset() is for DataLoaders made with iterable=False")
        self._close_it()
        self._state = "idle"
        if self._queue is not None:
            self._queue._reopen()

    def _next_feed(self):
        """The next batch for the program's read op; EOFException when the pass is over."""
        if self._state == "idle" and self._batch_reader is None and self._queue is not None:
            feed = self._queue._pop()   # no data source: the batches a script pushes into the queue
            if feed is None:
                raise EOFException("the queue of %s is closed and empty" % self._id)
            return feed
        if self._state == "idle":
            raise RuntimeError("the program reads from a DataLoader/PyReader that was not started: call "
                               "loader.start() before exe.run (and loader.reset() after EOFException)")
        if self._state == "exhausted":
            raise EOFException("the DataLoader has no more batches (call reset() then start())")
        try:
            return next(self._it)
        except StopIteration:
            self._state = "exhausted"
            self._it = None
            raise EOFException("the DataLoader has no more batches (call reset() then start())")


class _BlockingQueue:
    """Paddle's LoDTensorBlockingQueue of a non-iterable loader (`loader.queue`, `py_reader.queue`): scripts
    may push batches into it themselves, a LoDTensorArray (one LoDTensor per feed variable) at a time, often
    from a thread, and close() it; a loader with no data source that was not started then reads from it,
    and its run after the queue is closed and empty raises EOFException. push() waits while `capacity`
    batches are queued. Every wait has a deadline (FLAGS_reader_queue_timeout_ms), where Paddle blocks."""

    def __init__(self, loader):
        self._loader = loader
        self._items = collections.deque()
        self._cond = threading.Condition()
        self._closed = False

    def size(self):
        return len(self._items)

    def capacity(self):
        return self._loader._capacity or 0

    def is_closed(self):
        return self._closed if self._loader._state != "running" else False

    def push(self, tensors):
        names = [v.name for v in self._loader._feed_list]
        if len(tensors) != len(names):
            raise ValueError("%s.queue.push: expected %d tensors (%s), got %d"
                             % (self._loader._id, len(names), ", ".join(names), len(tensors)))
        feed = {}
        for n, t in zip(names, tensors):
            if not isinstance(t, LoDTensor):
                lt = LoDTensor()
                lt.set(t, CPUPlace())
                t = lt
            feed[n] = t
        limit = max(1, self._loader._capacity or 1)
        deadline = time.monotonic() + _timeout_s()
        with self._cond:
            while len(self._items) >= limit and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("%s.queue.push: the queue stayed full (%d batches) for %.0f s "
                                       "(FLAGS_reader_queue_timeout_ms); is the program running?"
                                       % (self._loader._id, limit, _timeout_s()))
                self._cond.wait(left)
            if self._closed:
                return False
            self._items.append(feed)
            self._cond.notify_all()
        return True

    def close(self):
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _reopen(self):
        """reset(): an empty, open queue for the next pass (Paddle reopens its queue)."""
        with self._cond:
            self._items.clear()
            self._closed = False
            self._cond.notify_all()

    def _pop(self):
        """The next pushed batch; None once the queue is closed and empty."""
        deadline = time.monotonic() + _timeout_s()
        with self._cond:
            while not self._items and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the program reads from %s, which was not started and got no batch "
                                       "pushed into its queue for %.0f s (FLAGS_reader_queue_timeout_ms): set a "
                                       "data source and call start(), or push LoDTensorArrays into its queue"
                                       % (self._loader._id, _timeout_s()))
                self._cond.wait(left)
            if not self._items:
                return None
            feed = self._items.popleft()
            self._cond.notify_all()
            return feed


class DataLoader:
    @staticmethod
    def from_generator(feed_list=None, capacity=None, use_double_buffer=True, iterable=True, return_list=False,
                       use_multiprocess=False, drop_last=True):
        return GeneratorLoader(feed_list, capacity, use_double_buffer, iterable, return_list, drop_last)

    @staticmethod
    def from_dataset(dataset, places, drop_last=True):
        return DatasetLoader(dataset, places, drop_last)


class PyReader(GeneratorLoader):
    """fluid.io.PyReader (Paddle 1.5's name for the same loader; decorate_* set the data source)."""

    @property
    def _loader(self):
        """Paddle's PyReader wraps a GeneratorLoader here; this one is its own loader."""
        return self

    def __init__(self, feed_list=None, capacity=None, use_double_buffer=True, iterable=True, return_list=False):
        super().__init__(feed_list, capacity, use_double_buffer, iterable, return_list, drop_last=True)

    def decorate_sample_generator(self, sample_generator, batch_size, drop_last=True, places=None):
        return self.set_sample_generator(sample_generator, batch_size, drop_last, places)

    def decorate_sample_list_generator(self, reader, places=None):
        return self.set_sample_list_generator(reader, places)

    def decorate_batch_generator(self, reader, places=None):
        return self.set_batch_generator(reader, places)
