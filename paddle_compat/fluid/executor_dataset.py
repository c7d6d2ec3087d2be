"""Executor.train_from_dataset / infer_from_dataset: run a program over every batch of a fluid.dataset.

What `thread` means here: the number of reader workers. Each worker reads its share of the files (or of
an InMemoryDataset's records), runs the pipe command, parses and batches on its own thread; the program
steps then run one at a time, in the order batches arrive, on the scope's shared parameters. Paddle runs
one program copy per thread without locks (Hogwild); here the steps themselves are serialized (torch
already spreads one step's kernels over the cores), so thread=1 gives exactly the batches and updates
of feeding the same batches to exe.run in file order.
"""

import queue
import sys
import threading
import time

import numpy as np

__all__ = ["run_from_dataset", "DatasetLoader", "FetchHandler"]

_STEP_WAIT = 5.0      # seconds between liveness checks of the reader threads
_DONE = object()


class FetchHandler:
    """fluid.executor.FetchHandler: train_from_dataset calls handler({key: numpy value}) for the variables of
    var_dict ({key: Variable}) about every period_secs. Paddle polls from a monitor thread each second; here
    the check runs between steps, so a value is never read in the middle of an update."""

    def __init__(self, var_dict=None, period_secs=60):
        if not var_dict:
            raise ValueError("FetchHandler: var_dict must map names to the Variables to fetch")
        self.var_dict = var_dict
        self.period_secs = period_secs

    def handler(self, res_dict):
        for key, v in res_dict.items():
            if isinstance(v, np.ndarray):
                sys.stdout.write("%s[0]: %s " % (key, v[0] if v.ndim else v))
        sys.stdout.write("\n")


def _call_handler(fetch_handler, scope):
    from .core import global_scope
    scope = scope if scope is not None else global_scope()
    res = {}
    for key, var in fetch_handler.var_dict.items():
        name = var if isinstance(var, str) else var.name
        found = scope.find_var(name)
        res[key] = np.array(found.get_tensor()) if found is not None and found.get_tensor()._is_initialized() \
            else None
    fetch_handler.handler(res)


def _check(dataset):
    from .dataset import DatasetBase
    if not isinstance(dataset, DatasetBase):
        raise TypeError("train_from_dataset: dataset must come from fluid.DatasetFactory().create_dataset(...), "
                        "got %s" % type(dataset).__name__)


def _batches(dataset, nthreads, place, drop_last=False):
    """Yields feed dicts: directly for one worker, through a bounded queue from reader threads for more."""
    from .dataset_feed import make_batch
    shards, slots = dataset._shards(nthreads)
    if drop_last:
        shards = [(recs for recs in shard if len(recs) == dataset.batch_size) for shard in shards]
    if len(shards) <= 1:
        for shard in shards:
            for recs in shard:
                yield make_batch(recs, slots, place)
        return
    q = queue.Queue(maxsize=4 * len(shards))
    stop = threading.Event()

    def work(shard):
        try:
            for recs in shard:
                item = make_batch(recs, slots, place)
                while not stop.is_set():
                    try:
                        q.put(item, timeout=_STEP_WAIT)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(_DONE)
        except BaseException as e:  # noqa: BLE001  (handed to the consumer)
            q.put(e)

    threads = [threading.Thread(target=work, args=(s,), daemon=True) for s in shards]
    for t in threads:
        t.start()
    running = len(threads)
    try:
        while running:
            try:
                item = q.get(timeout=_STEP_WAIT)
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and q.empty():
                    raise RuntimeError("train_from_dataset: the reader threads stopped without finishing")
                continue
            if item is _DONE:
                running -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item
    finally:
        stop.set()


def run_from_dataset(exe, program, dataset, scope, thread, debug, fetch_list, fetch_info, print_period,
                     what, fetch_handler=None):
    from .framework import default_main_program
    _check(dataset)
    if program is None:
        program = default_main_program()
    nthreads = thread if thread and thread > 0 else dataset.thread_num
    fetch_list = list(fetch_list or [])
    if fetch_info is None:
        fetch_info = [f if isinstance(f, str) else f.name for f in fetch_list]
    if len(fetch_info) != len(fetch_list):
        raise ValueError("%s: fetch_info has %d names for %d fetch_list entries"
                         % (what, len(fetch_info), len(fetch_list)))
    if print_period is None or print_period < 1:
        raise ValueError("%s: print_period must be a positive int, got %r" % (what, print_period))
    step, start = 0, time.time()
    last_handled = start
    for feed in _batches(dataset, nthreads, exe.place):
        out = exe.run(program, feed=feed, fetch_list=fetch_list, scope=scope)
        step += 1
        if fetch_list and step % print_period == 0:
            print("  ".join("%s: %s" % (info, v) for info, v in zip(fetch_info, out)))
            sys.stdout.flush()
        if fetch_handler is not None and time.time() - last_handled >= fetch_handler.period_secs:
            _call_handler(fetch_handler, scope)
            last_handled = time.time()
    if debug:
        dt = time.time() - start
        print("%s: %d batches in %.3f s (%.1f batches/s)" % (what, step, dt, step / dt if dt else 0.0))
    return None


class DatasetLoader:
    """fluid.io.DataLoader.from_dataset: iterate a dataset's batches as [feed dict per place] lists
    (read by dataset.thread_num reader threads); with several places, consecutive batches go one per place."""

    def __init__(self, dataset, places, drop_last=True):
        _check(dataset)
        if places is None:
            raise ValueError("DataLoader.from_dataset: places must be given (e.g. fluid.cpu_places(1))")
        self.dataset, self.drop_last = dataset, drop_last
        self.places = list(places) if isinstance(places, (list, tuple)) else [places]
        if not self.places:
            raise ValueError("DataLoader.from_dataset: places is empty")

    def __iter__(self):
        # feeds are built on the host; the executor moves them to the run's device
        group = []
        for feed in _batches(self.dataset, self.dataset.thread_num, self.places[0], self.drop_last):
            group.append(feed)
            if len(group) == len(self.places):   # a last group short of one batch per place is dropped
                yield group
                group = []

    def __call__(self):
        return iter(self)
