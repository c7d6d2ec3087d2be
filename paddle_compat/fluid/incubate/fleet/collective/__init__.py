"""Fleet for collective training: `from paddle_compat.fluid.incubate.fleet.collective import fleet,
DistributedStrategy`.

CollectiveOptimizer.minimize builds the local program, then transpiles it over the worker endpoints:
strategy.mode "nccl2" -> fleet.main_program is CompiledProgram(main).with_data_parallel(...) (gradients
averaged by the data-parallel runner); mode "collective" -> the transpiled Program itself, carrying
c_allreduce_sum (grad_allreduce) or the LocalSGD ops (local_sgd, or strategy.use_local_sgd).
"""

import warnings

from .....ir import default_startup_program
from .... import io
from ....compiler import BuildStrategy, CompiledProgram, ExecutionStrategy
from ....executor.executor import Executor
from .....ir import Program
from ....contrib.mixed_precision.decorator import OptimizerWithMixedPrecision, decorate
from ....optimizer.per_parameter import DGCMomentumOptimizer
from ....optimizer.wrappers import RecomputeOptimizer
from ....transpiler import DistributeTranspiler, DistributeTranspilerConfig
from ..base.fleet_base import DistributedOptimizer, Fleet, Mode
from ..base.role_maker import PaddleCloudRoleMaker

from . import checkpoint as _ckpt
from .checkpoint import TrainStatus

__all__ = ["fleet", "Collective", "CollectiveOptimizer", "DistributedStrategy", "TrainStatus"]


class DistributedStrategy(BuildStrategy):
    def __init__(self):
        super().__init__()
        self.use_local_sgd = False
        self.mode = "nccl2"              # or "collective"
        self.collective_mode = None      # "grad_allreduce" or "local_sgd" (mode "collective")
        self.nccl_comm_num = 1
        self.forward_recompute = False
        self.recompute_checkpoints = []
        self.use_amp = False
        self.amp_loss_scaling = 2 ** 15
        self.exec_strategy = ExecutionStrategy()


class Collective(Fleet):
    def __init__(self):
        super().__init__(Mode.COLLECTIVE)
        self._origin_program = None       # the local program, before transpiling (what save_* write)
        self._transpiled_program = None

    def _default_role_maker(self):
        # Paddle crashed on fleet.init() without a role maker; the environment is the obvious source.
        return PaddleCloudRoleMaker(is_collective=True)

    def _warn(self, what):
        warnings.warn("fleet.%s does nothing in collective mode (there are no parameter servers)" % what,
                      stacklevel=3)

    def init_worker(self):
        self._warn("init_worker")

    def run_worker(self, main_programs=None, scopes=None):
        self._warn("run_worker")

    def init_server(self, model_dir=None):
        self._warn("init_server")

    def run_server(self):
        self._warn("run_server")

    def stop_worker(self):
        self._warn("stop_worker")

    def distributed_optimizer(self, optimizer, strategy=None):
        self._optimizer = CollectiveOptimizer(optimizer, strategy)
        return self._optimizer

    def _program_to_save(self, executor, main_program, fn):
        if not isinstance(executor, Executor):
            raise TypeError("fleet.%s: executor must be a fluid.Executor, got %s" % (fn, type(executor).__name__))
        program = main_program if main_program is not None else self._origin_program
        if isinstance(program, CompiledProgram):
            program = program._program
        if not isinstance(program, Program):
            raise TypeError("fleet.%s: main_program must be a fluid.Program (or call distributed_optimizer(...)"
                            ".minimize first), got %s" % (fn, type(program).__name__))
        return program

    def save_inference_model(self, executor, dirname, feeded_var_names=None, target_vars=None, main_program=None,
                             export_for_deployment=True):
        """Worker 0 writes (every worker holds the same parameters); the others return at once."""
        program = self._program_to_save(executor, main_program, "save_inference_model")
        if not self.is_first_worker():
            return None
        return io.save_inference_model(dirname, feeded_var_names, target_vars, executor, program,
                                       export_for_deployment=export_for_deployment)

    def save_persistables(self, executor, dirname, main_program=None, filename=None):
        """Worker 0 writes the persistables of the local (untranspiled) program; the others return at once."""
        program = self._program_to_save(executor, main_program, "save_persistables")
        if not self.is_first_worker():
            return None
        return io.save_persistables(executor, dirname, program, filename)

    # checkpoints (checkpoint.py: layout, crash safety) ---------------------------------------------
    def save_check_point(self, executor, path, train_status, main_program=None, fs=None, local_cache_path=".cache",
                         remain_all_checkpoint=True):
        """Save the persistables and train_status as checkpoint <path>/__paddle_fleet_checkpoint__.<n+1>."""
        return _ckpt.save(self, executor, path, train_status, main_program, fs, local_cache_path,
                          remain_all_checkpoint)

    def load_check_point(self, executor, path, trainer_id, main_program=None, fs=None, local_cache_path=".cache",
                         ignore_empty=True):
        """Load the newest checkpoint under path; returns its TrainStatus (None if there is none)."""
        return _ckpt.load(self, executor, path, trainer_id, main_program, fs, local_cache_path, ignore_empty)

    def clean_redundant_check_points(self, root_path, fs=None, checkpoint_num=1):
        return _ckpt.clean(root_path, fs, checkpoint_num)

    def _get_last_checkpoint_no(self, root_path, fs=None):
        return _ckpt.last_checkpoint_no(root_path, fs)


fleet = Collective()


class CollectiveOptimizer(DistributedOptimizer):
    def __init__(self, optimizer, strategy=None):
        strategy = DistributedStrategy() if strategy is None else strategy
        if not isinstance(strategy, DistributedStrategy):
            raise TypeError("strategy must be a fleet.collective.DistributedStrategy, got %s"
                            % type(strategy).__name__)
        if not isinstance(strategy.recompute_checkpoints, list):
            raise ValueError("DistributedStrategy.recompute_checkpoints must be a list")
        super().__init__(optimizer, strategy)

    def _check_strategy(self):
        s = self._strategy
        if s.forward_recompute:
            if not s.recompute_checkpoints:
                raise ValueError("set DistributedStrategy.recompute_checkpoints when forward_recompute is True")
            if isinstance(self._optimizer, (RecomputeOptimizer, OptimizerWithMixedPrecision)):
                raise ValueError("can not use %s when you set DistStrategy.forward_recompute as True (the "
                                 "strategy wraps the optimizer itself)" % type(self._optimizer).__name__)
        if s.use_amp and isinstance(self._optimizer, (OptimizerWithMixedPrecision, DGCMomentumOptimizer)):
            raise ValueError("can not use %s when you set DistStrategy.mixed_precision as True (the strategy "
                             "decorates the optimizer itself)" % type(self._optimizer).__name__)
        if s.use_local_sgd:
            s.mode, s.collective_mode = "collective", "local_sgd"
        if s.collective_mode is not None and s.mode != "collective":
            raise ValueError("DistributedStrategy.collective_mode=%r needs mode='collective', got mode=%r"
                             % (s.collective_mode, s.mode))
        if s.mode not in ("nccl2", "collective"):
            raise ValueError("DistributedStrategy.mode must be 'nccl2' or 'collective', got %r" % (s.mode,))

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        self._check_strategy()     # before the role check, as Paddle (a bad strategy is reported first)
        fleet._rm()
        main = loss.block.program
        startup = startup_program if startup_program is not None else default_startup_program()
        opt = self._optimizer
        if self._strategy.forward_recompute:
            opt = RecomputeOptimizer(opt)
            opt._set_checkpoints(self._strategy.recompute_checkpoints)
        if self._strategy.use_amp:     # Paddle 1.8: dynamic loss scaling from amp_loss_scaling
            opt = decorate(opt, init_loss_scaling=self._strategy.amp_loss_scaling, use_dynamic_loss_scaling=True)
        result = opt.minimize(loss, startup, parameter_list, no_grad_set)
        fleet.startup_program = startup
        fleet._origin_program = main.clone()
        fleet._transpiled_program = main
        fleet.main_program = self._transpile(loss, startup, main)
        return result

    def _transpile(self, loss, startup, main):
        s = self._strategy
        eps, tid = fleet.worker_endpoints(), fleet.worker_index()
        config = DistributeTranspilerConfig()
        config.mode = s.mode
        config.collective_mode = s.collective_mode
        config.nccl_comm_num = s.nccl_comm_num
        config.use_hierarchical_allreduce = s.use_hierarchical_allreduce
        config.hierarchical_allreduce_inter_nranks = s.hierarchical_allreduce_inter_nranks
        DistributeTranspiler(config).transpile(tid, program=main, startup_program=startup, trainers=",".join(eps),
                                               current_endpoint=eps[tid])
        if s.mode == "collective":
            return main
        s.num_trainers, s.trainer_id, s.trainers_endpoints = len(eps), tid, list(eps)
        return CompiledProgram(main).with_data_parallel(loss_name=loss.name, build_strategy=s,
                                                        exec_strategy=s.exec_strategy)
