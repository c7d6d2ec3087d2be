"""Executor.train_from_dataset / infer_from_dataset: run a program over every batch of a fluid.dataset.

What `thread` means here: N workers, each with its share of the files (or of an InMemoryDataset's
records). A QueueDataset worker's files are read through the pipe command, parsed and batched by a helper
process (dataset_reader); a reader thread per worker receives the batches (or batches an InMemoryDataset's
records) ahead of the steps. Then, by mode:
- Hogwild (a plain Program run locally, or an async pserver trainer program): each worker also runs the
  program on its own batches, as Paddle 1.8 does: its own lowering (kernels, temporaries and the comm
  plan's per-step buffers are its own), parameters read from the one scope and updated in place without
  locks (lower_block's shared_params); torch releases the GIL inside kernels. An async trainer's worker
  sends its gradients and receives parameters each step; the pserver applies each push as it comes. A
  half-async trainer's workers meet at its communicator's barrier each step, which merges their gradients
  into one send per block (backends/ps/half_async.py).
- Serialized (thread=1; sync and Geo-SGD pserver trainers, whose pservers expect one exchange per trainer
  per step, or count this trainer's steps; a CompiledProgram): the steps run one at a time in the order
  batches arrive. thread=1 gives exactly the batches and updates of feeding the same batches to exe.run
  in file order.
"""

import queue
import sys
import threading
import time

import numpy as np
from ...backends.ps.connections import for_executor
from ...backends.ps.records import is_pserver_program, trainer_plan
from ...ir import CPUPlace, LoDTensor, Program, ScopeVar, default_main_program, global_scope
from ...ir.lazy import torch
from ...ir.tensor_text import fetch_text
from ..dataset.datasets import DatasetBase

__all__ = ["run_from_dataset", "DatasetLoader", "FetchHandler"]

_STEP_WAIT = 5.0      # seconds between liveness checks of the reader threads
_DONE = object()


class FetchHandler:
    """fluid.executor.FetchHandler: train_from_dataset calls handler({key: numpy value}) for the variables of
    var_dict ({key: Variable}) about every period_secs. Paddle polls from a monitor thread each second; here
    the check runs between steps (of the calling Hogwild worker: the others may be updating, as in Paddle)."""

    def __init__(self, var_dict=None, period_secs=60):
        if not var_dict:
            raise ValueError("FetchHandler: var_dict must map names to the Variables to fetch")
        if isinstance(var_dict, str):   # one variable's name (Paddle takes it; its monitor thread then skips it)
            var_dict = {var_dict: var_dict}
        self.var_dict = var_dict
        self.period_secs = period_secs

    @staticmethod
    def help():
        print("""
class FetchHandlerExample(FetchHandler):
    def handler(self, res_dict):
        print("auc: {}, {}".format(res_dict["auc"], time.ctime()))

auc = Variable()
var_dict = {"auc": auc}
handler = FetchHandlerExample(var_dict=var_dict)
""")

    def handler(self, res_dict):
        for key, v in res_dict.items():
            if isinstance(v, np.ndarray):
                sys.stdout.write("%s[0]: %s " % (key, v[0] if v.ndim else v))
        sys.stdout.write("\n")


def _call_handler(fetch_handler, scope):
    scope = scope if scope is not None else global_scope()
    res = {}
    for key, var in fetch_handler.var_dict.items():
        name = var if isinstance(var, str) else var.name
        found = scope.find_var(name)
        res[key] = np.array(found.get_tensor()) if found is not None and found.get_tensor()._is_initialized() \
            else None
    fetch_handler.handler(res)


def _check(dataset):
    if dataset is None:   # (Paddle 1.8.5's words)
        raise RuntimeError("dataset is need and should be initialized")
    if not isinstance(dataset, DatasetBase):
        raise TypeError("train_from_dataset: dataset must come from fluid.DatasetFactory().create_dataset(...), "
                        "got %s" % type(dataset).__name__)


def _batches(dataset, nthreads, place, drop_last=False, tagged=False):
    """Yields feed dicts (with tagged=True: (shard number, feed dict)), built by one reader thread per shard
    (a bounded queue merges them). A single QueueDataset source is read on the caller's thread: its helper
    process already runs ahead (by the pipe's buffer), and a reader thread would wait for the GIL at each of
    its reads while a step runs."""
    sources = dataset._feeds(nthreads, drop_last)
    if tagged:
        sources = [_tag(k, source) for k, source in enumerate(sources)]
    if len(sources) == 1 and dataset._reads_ahead:
        return iter(sources[0])
    return _background(sources)


def _tag(k, source):
    for feed in source:
        yield k, feed


def _background(sources, depth=4):
    """Items of the `sources` iterators, each run on its own thread, in a bounded queue, so that receiving
    or building the next batches overlaps the steps that consume them. With one source the order is
    kept. An error in a source is raised here."""
    if not sources:
        return
    q = queue.Queue(maxsize=depth * len(sources))
    stop = threading.Event()

    def work(source):
        try:
            for item in source:
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

    threads = [threading.Thread(target=work, args=(s,), daemon=True, name="dataset-reader")
               for s in sources]
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
    start = time.time()
    if nthreads > 1 and _hogwild(program):
        step = _run_hogwild(exe, program, dataset, scope, nthreads, fetch_list, fetch_info, print_period,
                            fetch_handler)
    else:
        step = _run_serial(exe, program, dataset, scope, nthreads, fetch_list, fetch_info, print_period,
                           fetch_handler)
    if debug:
        dt = time.time() - start
        print("%s: %d batches in %.3f s (%.1f batches/s)" % (what, step, dt, step / dt if dt else 0.0))
    return None


def _hogwild(program):
    if not isinstance(program, Program):
        return False
    info = trainer_plan(program)
    if info is None:
        return not is_pserver_program(program)
    return not info.sync_mode and not info.geo


def _half_async_communicator(exe, program):
    """The trainer's half-async communicator when `program` is a half-async trainer program, else None."""
    info = trainer_plan(program)
    if info is None or not info.half_async:
        return None
    return for_executor(exe, info).communicator(info.communicator_flags)


def _dense_slots(dataset):
    return {v.name for v in dataset.use_vars if not v.lod_level}


def _print_fetch(fetch_info, fetch_list, out, dense_slots=()):
    """Paddle 1.8's dump of each fetched variable (its PrintVar): info, name, then the tensor's text."""
    lines = []
    for info, var, t in zip(fetch_info, fetch_list, out):
        name = var if isinstance(var, str) else var.name
        a = np.asarray(t)
        lod = t.lod() if hasattr(t, "lod") else None
        if name in dense_slots and not lod and a.ndim:
            # Paddle's data feed gives a dense slot the LoD of its values per instance ({{0, 3, 6}} for two
            # rows of 3), which shows here; the feed here carries none (it would not fit the rows)
            k = int(np.prod(a.shape[1:])) if a.ndim > 1 else 1
            lod = [list(range(0, a.shape[0] * k + 1, k))] if k else None
        lines.append(fetch_text(info, name, a, lod) + "\n")
    sys.stdout.write("".join(lines))
    sys.stdout.flush()


def _run_hogwild(exe, program, dataset, scope, nthreads, fetch_list, fetch_info, print_period, fetch_handler):
    """One thread per shard, each reading and running its own batches; returns the number of steps."""
    if exe._closed:
        raise RuntimeError("Executor.train_from_dataset after Executor.close(): create a new Executor")
    scope = scope if scope is not None else global_scope()
    sources = dataset._feeds(nthreads)
    lock = threading.Lock()
    state = {"step": 0, "handled": time.time()}
    errors = []
    stop = threading.Event()

    comm = _half_async_communicator(exe, program)

    def work(worker, source):
        own = 0
        try:
            for feed in (source if dataset._reads_ahead else _background([source])):
                if stop.is_set():
                    return
                out = exe._run_program(program, feed, fetch_list, scope, False, worker=worker)
                own += 1
                with lock:
                    state["step"] += 1
                    # as Paddle 1.8: thread 0 prints, every print_period of its own batches
                    if fetch_list and worker == 0 and own % print_period == 0:
                        _print_fetch(fetch_info, fetch_list, out, _dense_slots(dataset))
                    if fetch_handler is not None and time.time() - state["handled"] >= fetch_handler.period_secs:
                        _call_handler(fetch_handler, scope)
                        state["handled"] = time.time()
        except BaseException as e:  # noqa: BLE001  (re-raised by the caller)
            errors.append(e)
            stop.set()
        finally:
            if comm is not None:
                comm.runner_done()      # the others' rounds no longer wait for this thread

    threads = [threading.Thread(target=work, args=(i, s), daemon=True, name="hogwild-%d" % i)
               for i, s in enumerate(sources)]
    if comm is not None:
        comm.set_runners(len(threads))  # a half-async round starts when every thread is at its barrier
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        if comm is not None:
            comm.set_runners(1)
    if errors:
        raise errors[0]
    return state["step"]


def _run_serial(exe, program, dataset, scope, nthreads, fetch_list, fetch_info, print_period, fetch_handler):
    step = 0
    shard0 = 0      # batches of the first worker's share: Paddle's thread 0 prints every print_period of them
    last_handled = time.time()
    for shard, feed in _batches(dataset, nthreads, exe.place, tagged=True):
        out = exe.run(program, feed=feed, fetch_list=fetch_list, scope=scope, return_numpy=False)
        step += 1
        shard0 += shard == 0
        if fetch_list and shard == 0 and shard0 % print_period == 0:
            _print_fetch(fetch_info, fetch_list, out, _dense_slots(dataset))
        if fetch_handler is not None and time.time() - last_handled >= fetch_handler.period_secs:
            _call_handler(fetch_handler, scope)
            last_handled = time.time()
    return step


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
        # each value a LoDTensor on its place, as Paddle's loader yields them (scripts call .shape(), ._place())
        group = []
        for feed in _batches(self.dataset, self.dataset.thread_num, self.places[0], self.drop_last):
            group.append(_on_place(feed, self.places[len(group)]))
            if len(group) == len(self.places):   # a last group short of one batch per place is dropped
                yield group
                group = []

    def __call__(self):
        return iter(self)


def _on_place(feed, place):
    out = {}
    for name, value in feed.items():
        if not isinstance(value, LoDTensor):
            if isinstance(value, np.ndarray) and value.flags.c_contiguous and isinstance(place, CPUPlace):
                value = LoDTensor(_holder=ScopeVar(value=torch.from_numpy(value)))   # (no copy)
            else:
                t = LoDTensor()
                t.set(value, place)
                value = t
        elif value._holder.value is not None and not value._place()._equals(place):
            moved = LoDTensor()
            moved.set(value._holder.value, place)
            moved._holder.lod = value._holder.lod
            value = moved
        out[name] = value
    return out
