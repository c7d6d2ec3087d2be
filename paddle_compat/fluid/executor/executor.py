"""Executor: lower a Program's global block once (per feeds/fetches/scope/version), then run it.

torch is imported on the first run, not at import: building programs stays torch-free.
"""

import threading

import numpy as np

from ...backends.feeds import FeedSpec, PreparedRun, fetch_names_of, index_bounds
from ...backends.lowering.codegen import lower_block
from ...backends.ps import layer_listen
from ...backends.ps.records import is_pserver_program, trainer_plan
from ...ir import (CPUPlace, LoDTensor, Program, Variable, convert_dtype, default_main_program,  # noqa: F401
                   dtype_name, flag_value, global_scope, scope_guard, torch_device)
from ..transpiler.ps_table_trainer import TABLES_KEY, remote_lookups
from . import prune_run
from .dataset_run import FetchHandler, run_from_dataset  # noqa: F401  (fluid.executor.FetchHandler)

__all__ = ["Executor", "global_scope", "scope_guard", "as_numpy"]


def as_numpy(tensor):
    if isinstance(tensor, (list, tuple)):
        return [as_numpy(t) for t in tensor]
    if isinstance(tensor, LoDTensor):
        if tensor.lod():
            raise RuntimeError("Some of your fetched tensors hold LoD information. They can not be completely "
                               "cast to Python ndarray. Please set the parameter 'return_numpy' as 'False' to "
                               "return LoDTensor itself directly.")
        return np.array(tensor)
    return tensor


class Executor:
    def __init__(self, place=None):
        self.place = place if place is not None else CPUPlace()
        self._device = None
        self._cache = {}
        # exe.run(use_prune=True): (program, feed names, fetch_list) -> the pruned program; an original
        # CompiledProgram -> the first pruned copy of it, whose place scopes the later copies share
        self.pruned_program_caches = {}
        self.pruned_program_scope_caches = {}
        self._prepare_lock = threading.Lock()
        self._closed = False
        # Backends keep per-executor state here (RPC clients, process groups) and register what
        # close() must do (tell pservers this trainer is done, ...).
        self.runtime = {}
        self._closers = []

    @property
    def device(self):
        if self._device is None:
            self._device = torch_device(self.place)
        return self._device

    def close(self):
        """Release this executor; in distributed modes this tells the pservers this trainer is done."""
        if self._closed:
            return
        self._closed = True
        closers, self._closers = self._closers, []
        for fn in reversed(closers):
            fn()
        self._cache.clear()
        self.pruned_program_caches.clear()
        self.pruned_program_scope_caches.clear()

    def _prune_program(self, program, feed=None, fetch_list=None, optimize_ops=None):
        """`program` (a Program, or a CompiledProgram whose program is replaced) cut down to what fetch_list and
        optimize_ops need given the feed; no optimize_ops means every optimize op of the program."""
        return prune_run.prune_program(program, feed, fetch_list, optimize_ops)

    def _update_feed(self, program, feed):
        return prune_run.update_feed(program, feed)

    def _add_closer(self, fn):
        self._closers.append(fn)

    def run(self, program=None, feed=None, fetch_list=None, feed_var_name="feed", fetch_var_name="fetch",
            scope=None, return_numpy=True, use_program_cache=False, return_merged=True, use_prune=False):
        if self._closed:
            raise RuntimeError("Executor.run after Executor.close(): create a new Executor")
        if program is None:
            program = default_main_program()
        # optimize ops in fetch_list (what minimize returns) name the optimizers to run and turn pruning on
        fetch_list, optimize_ops = prune_run.split_optimize_ops(fetch_list)
        if optimize_ops:
            use_prune = True
        if use_prune:
            program, feed = prune_run.pruned_for_run(self, program, feed, fetch_list, optimize_ops)
        if hasattr(program, "_run_with_executor"):   # CompiledProgram
            return program._run_with_executor(self, feed, fetch_list, scope, return_numpy, return_merged)
        if not isinstance(program, Program):
            raise TypeError("Executor.run: program must be a fluid.Program or CompiledProgram, got %s"
                            % type(program).__name__)
        return self._run_program(program, feed, fetch_list, scope, return_numpy)

    def _run_program(self, program, feed, fetch_list, scope, return_numpy, autograd_for=None, worker=None,
                     capture=None):
        """worker: a Hogwild thread's number (train_from_dataset): it gets a lowering of its own (kernels,
        comm-plan buffers) reading the shared parameters (lower_block's shared_params).
        capture: whole-step CUDA graphs on a CUDA place (None: FLAGS_cuda_graph_capture; a CompiledProgram
        passes its BuildStrategy.allow_cuda_graph_capture)."""
        if scope is None:
            scope = global_scope()
        if feed is None:
            feed = {}
        if isinstance(feed, (list, tuple)):
            # what an iterable DataLoader yields: one dict per place (Paddle accepts one for a Program)
            if len(feed) != 1 or not isinstance(feed[0], dict):
                raise TypeError("feed is a list of %d items; a Program runs on one place and takes a dict or a "
                                "list holding one dict (several places need a data-parallel CompiledProgram)"
                                % len(feed))
            feed = feed[0]
        if not isinstance(feed, dict):
            raise TypeError("feed must be a dict {variable name: value} when running a Program "
                            "(a list of per-place dicts needs a data-parallel CompiledProgram)")
        fetch_names = fetch_names_of(fetch_list)
        # FLAGS_check_nan_inf changes the lowered code (fluid.set_flags between runs takes effect at once)
        check = flag_value("FLAGS_check_nan_inf")
        if capture is None:     # (CUDA graphs only exist off the CPU: no flag lookup per CPU step)
            capture = self.device != "cpu" and flag_value("FLAGS_cuda_graph_capture")
        key = (program._uid, program._version, tuple(feed), tuple(fetch_names), scope._uid, check, autograd_for,
               bool(capture), worker)
        prepared = self._cache.get(key)
        if prepared is None:
            with self._prepare_lock:   # Hogwild threads lower concurrently
                prepared = self._cache.get(key)
                if prepared is None:
                    prepared = self._prepare_cached(program, feed, fetch_names, scope, autograd_for, worker, key)
        if getattr(prepared, "serves", False):
            # a hand-built server (layers.io.ListenAndServ): whatever happens, its early-bound endpoint, port
            # file and SIGINT handling end with the run
            try:
                return prepared.run(feed, return_numpy)
            finally:
                layer_listen.release()
        return prepared.run(feed, return_numpy)

    def _prepare_cached(self, program, feed, fetch_names, scope, autograd_for, worker, key):
        run = program
        serves = any(op.type == "listen_and_serv" for op in program.global_block().ops)
        if serves:
            # a hand-built server announces its port before the lowering loads torch
            try:
                layer_listen.bind_early(program)
                prepared = self._prepare_cached_program(program, feed, fetch_names, scope, autograd_for, worker, key)
            except BaseException:
                layer_listen.release()
                raise
            prepared.serves = True
            return prepared
        return self._prepare_cached_program(program, feed, fetch_names, scope, autograd_for, worker, key)

    def _prepare_cached_program(self, program, feed, fetch_names, scope, autograd_for, worker, key):
        run = program
        plan = trainer_plan(program)
        if plan is not None:
            if plan.tables:     # later programs of this executor may look these tables up (remote_lookups)
                self.runtime[TABLES_KEY] = plan
        elif not is_pserver_program(program):
            # a test program cloned before transpile, looking up a table only the pservers hold (the program
            # itself when this executor ran no trainer program with tables)
            run = remote_lookups(program, scope, self.runtime.get(TABLES_KEY))
        prepared = self._prepare(run, feed, fetch_names, scope, autograd_for, worker is not None, key[5], key[7])
        # a program edited between runs leaves stale lowerings behind: drop them
        for old in [k for k in list(self._cache) if k[0] == key[0] and k[1] != key[1]]:
            self._cache.pop(old, None)
        self._cache[key] = prepared
        return prepared

    def _prepare(self, program, feed, fetch_names, scope, autograd_for=None, shared_params=False,
                 check_nan_inf=False, capture=False):
        block = program.global_block()
        specs, bounds = [], index_bounds(block) if self.device != "cpu" else {}
        for name in feed:
            if not isinstance(name, str):
                raise TypeError("feed keys must be variable names, got %r" % (name,))
            var = block._find_var_recursive(name)
            if var is None:
                raise ValueError("feed: '%s' is not a variable of the program" % name)
            value = feed[name]
            fed_lod = isinstance(value, LoDTensor) and bool(value._holder.lod) and var.lod_level == 0
            specs.append(FeedSpec(var, self.device, fed_lod, bounds.get(name)))
        for f in fetch_names:
            if not any(b.has_var(f) for b in program.blocks):
                raise ValueError("fetch_list: '%s' is not a variable of the program" % f)
        try:
            lowered = lower_block(program, 0, scope, self.device, [s.name for s in specs], fetch_names,
                                  executor=self, feed_lod={s.name for s in specs if s.lod},
                                  autograd_for=autograd_for, shared_params=shared_params,
                                  check_nan_inf=check_nan_inf, capture=capture)
        except Exception:
            # Paddle creates the block's persistable variables in the scope before it runs an op, so they
            # exist (uninitialised) after a run that failed
            for v in block.vars.values():
                if v.persistable and scope.find_var(v.name) is None:
                    scope.var(v.name)
            raise
        persist, held = [], []
        for i, s in enumerate(specs):
            var = block._find_var_recursive(s.name)
            if var.persistable:
                persist.append((i, scope.find_var(s.name) or scope.var(s.name)))
            else:
                held.append((i, scope.var(s.name)))
        return PreparedRun(lowered, specs, persist, held)

    def train_from_dataset(self, program=None, dataset=None, scope=None, thread=0, debug=False, fetch_list=None,
                           fetch_info=None, print_period=100, fetch_handler=None):
        """Run `program` over every batch of a fluid.dataset (see executor_dataset for `thread`)."""
        return run_from_dataset(self, program, dataset, scope, thread, debug, fetch_list, fetch_info,
                                print_period, "train_from_dataset", fetch_handler)

    def infer_from_dataset(self, program=None, dataset=None, scope=None, thread=0, debug=False, fetch_list=None,
                           fetch_info=None, print_period=100, fetch_handler=None):
        return run_from_dataset(self, program, dataset, scope, thread, debug, fetch_list, fetch_info,
                                print_period, "infer_from_dataset", fetch_handler)


def _fetch_var(name, scope=None, return_numpy=True):
    """executor._fetch_var: a variable's value from `scope` (the global scope by default)."""
    name = name.name if isinstance(name, Variable) else name
    if not isinstance(name, str):
        raise TypeError("_fetch_var: name must be a str or a Variable, got %s" % type(name).__name__)
    scope = global_scope() if scope is None else scope
    var = scope.find_var(name)
    if var is None:
        raise ValueError("Cannot find %s in scope. Perhaps you need to make the variable persistable by using "
                         "var.persistable = True in your program." % name)
    tensor = var.get_tensor()
    return as_numpy(tensor) if return_numpy else tensor


def _as_lodtensor(data, place, dtype=None):
    """executor._as_lodtensor: a numpy array (or a Python scalar with its dtype) as a LoDTensor without LoD."""
    if isinstance(data, list):
        raise RuntimeError("Some of your feed data hold LoD information. They can not be completely cast from a "
                           "list of Python ndarray to LoDTensor. Please convert data to LoDTensor directly before "
                           "feeding the data.")
    if not isinstance(data, np.ndarray) and np.isscalar(data):
        if dtype is None:
            raise AssertionError("dtype should be given when casting python scalar to tensor")
        data = np.array([data]).astype(dtype_name(convert_dtype(dtype)))
    t = LoDTensor()
    t.set(data, place)
    return t
