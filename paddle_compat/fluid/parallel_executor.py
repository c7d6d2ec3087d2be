"""ParallelExecutor: Paddle 1.x's data-parallel front door, built on CompiledProgram."""

from ..ir import CPUPlace, CUDAPlace, cpu_places, cuda_places, default_main_program, global_scope
from .compiler import BuildStrategy, CompiledProgram, ExecutionStrategy
from .executor.executor import Executor

__all__ = ["ParallelExecutor"]


class ParallelExecutor:
    def __init__(self, use_cuda, loss_name=None, main_program=None, share_vars_from=None, exec_strategy=None,
                 build_strategy=None, num_trainers=1, trainer_id=0, scope=None):
        if build_strategy is None:
            build_strategy = BuildStrategy()
        if num_trainers != 1 or build_strategy.num_trainers == 1:
            build_strategy.num_trainers = num_trainers
        if trainer_id != 0 or build_strategy.trainer_id == 0:
            build_strategy.trainer_id = trainer_id
        if not 0 <= build_strategy.trainer_id < max(build_strategy.num_trainers, 1):
            raise ValueError("ParallelExecutor: trainer_id %d is out of range for num_trainers %d"
                             % (build_strategy.trainer_id, build_strategy.num_trainers))
        self._places = cuda_places() if use_cuda else cpu_places()
        if use_cuda and not self._places:
            raise RuntimeError("ParallelExecutor(use_cuda=True) but torch sees no CUDA device")
        self._scope = scope if scope is not None else global_scope()
        main_program = main_program if main_program is not None else default_main_program()
        self._compiled_program = CompiledProgram(main_program).with_data_parallel(
            loss_name=loss_name, build_strategy=build_strategy, exec_strategy=exec_strategy or ExecutionStrategy(),
            share_vars_from=share_vars_from._compiled_program if share_vars_from else None,
            places=self._places)
        self._place = CUDAPlace(0) if use_cuda else CPUPlace()
        self._exe = Executor(self._place)
        # Paddle's local execution scopes (a step's temporaries, per place): made by a run, dropped every
        # num_iteration_per_drop_scope runs or by drop_local_exe_scopes(). Temporaries live in no scope here
        # (the lowered step holds them), so only the bookkeeping Paddle exposes is kept.
        self._drop_every = max(1, int((exec_strategy or ExecutionStrategy()).num_iteration_per_drop_scope))
        self._runs_since_drop = 0
        self._exe_scopes_alive = False

    def run(self, fetch_list, feed=None, feed_dict=None, return_numpy=True):
        if feed is None and feed_dict is not None:
            feed = feed_dict
        out = self._exe.run(program=self._compiled_program, scope=self._scope, feed=feed, fetch_list=fetch_list,
                            return_numpy=return_numpy)
        self._runs_since_drop += 1
        self._exe_scopes_alive = self._runs_since_drop % self._drop_every != 0
        if not self._exe_scopes_alive:
            self._runs_since_drop = 0
        return out

    @property
    def device_count(self):
        return len(self._places)

    def drop_local_exe_scopes(self):
        self._exe_scopes_alive = False
        self._runs_since_drop = 0

    def _need_create_local_exe_scopes(self):
        """Whether the next run makes the local execution scopes anew (after a drop, or before any run)."""
        return not self._exe_scopes_alive
