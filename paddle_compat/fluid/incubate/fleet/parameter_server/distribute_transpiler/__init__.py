"""Fleet in pserver mode: `from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler
import fleet` (Paddle's path; `...parameter_server.distributed_transpiler` works too).

    fleet.init(role_maker)                       # None -> MPISymetricRoleMaker, as Paddle
    opt = fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), strategy)   # a DistributeTranspilerConfig
    opt.minimize(loss)                           #   or StrategyFactory.create_*_strategy()
    if fleet.is_server():
        fleet.init_server(model_dir)             # runs the pserver startup; loads a checkpoint if given
        fleet.run_server()                       # returns once every worker called fleet.stop_worker()
    else:
        fleet.init_worker()
        exe.run(fleet.startup_program)           # pulls the initial weights from the pservers
        ... exe.run(fleet.main_program, feed=..., fetch_list=[loss]) ...
        fleet.save_persistables(exe, dirname)    # on the first worker
        fleet.stop_worker()
"""

import dataclasses
import os

from ......ir import CPUPlace, Program, Variable, default_startup_program
from ..... import io
from .....compiler import CompiledProgram
from .....executor.executor import Executor
from .....parallel_executor import ParallelExecutor
from .....transpiler import DistributeTranspiler, DistributeTranspilerConfig
from ...base.fleet_base import DistributedOptimizer, Fleet, Mode
from ...base.role_maker import MPISymetricRoleMaker
from .distributed_strategy import (AsyncStrategy, DistributedStrategy, GeoStrategy,  # noqa: F401
                                   HalfAsyncStrategy, StrategyFactory, SyncStrategy, TrainerRuntimeConfig)
from ......backends.checkpoint_dir import verify
from ......backends.ps.connections import close_joined
from ......backends.ps.records import set_trainer_plan, trainer_plan

__all__ = ["fleet", "DistributedTranspiler", "TranspilerOptimizer", "StrategyFactory"]


class DistributedTranspiler(Fleet):
    def __init__(self):
        super().__init__(Mode.TRANSPILER)
        self._strategy = None
        self._transpiler = None
        self._origin_program = None
        self._executor = None

    def _default_role_maker(self):
        return MPISymetricRoleMaker()

    def init(self, role_maker=None):
        super().init(role_maker)
        self._executor = Executor(CPUPlace())

    # workers ---------------------------------------------------------------------------------------
    def init_worker(self):
        """Trainers join the pservers at their first RPC (running fleet.startup_program, which pulls the
        initial weights), with a deadline naming any unreachable pserver: nothing to wait for here."""
        self._need_minimized("init_worker")

    def stop_worker(self):
        """Tell every pserver this worker is done (they return from run_server once all workers are)."""
        close_joined()      # whichever Executors hold the connection: this worker is done
        if self._executor is not None:
            self._executor.close()
        if isinstance(self._role_maker, MPISymetricRoleMaker):
            self._role_maker._finalize()

    # servers ---------------------------------------------------------------------------------------
    def init_server(self, model_dir=None):
        self._need_minimized("init_server")
        if not self.is_server():
            raise RuntimeError("fleet.init_server: this process is a worker (fleet.is_server() is False)")
        if model_dir is not None:
            verify(model_dir)    # an interrupted save, or one caught between its two renames: named here
            if not os.path.isdir(model_dir):
                raise ValueError("fleet.init_server: there is no directory named '%s'" % model_dir)
        self._executor.run(self.startup_program)
        if model_dir is not None:
            io.load_persistables(self._executor, model_dir, self.main_program)

    def run_server(self):
        self._need_minimized("run_server")
        if not self.is_server():
            raise RuntimeError("fleet.run_server: this process is a worker (fleet.is_server() is False)")
        self._executor.run(self.main_program)

    # optimizer and saving --------------------------------------------------------------------------
    def distributed_optimizer(self, optimizer, strategy=None):
        if not self._is_initialized:
            raise ValueError("use fleet.init(role_maker) before fleet.distributed_optimizer(...)")
        self._optimizer = TranspilerOptimizer(optimizer, strategy)
        return self._optimizer

    def save_inference_model(self, executor, dirname, feeded_var_names, target_vars, main_program=None,
                             export_for_deployment=True):
        _check_executor(executor, "save_inference_model")
        if isinstance(main_program, CompiledProgram):
            raise TypeError("fleet.save_inference_model: main_program must be a Program, not a CompiledProgram")
        self._need_minimized("save_inference_model")
        # the pruned program holds the trainer's own copy of every parameter (its last step's): any worker
        # may call this; only a distributed lookup table is gathered from the pservers (fluid/io_table_export)
        io.save_inference_model(dirname, feeded_var_names, target_vars, executor,
                                main_program or self.main_program, export_for_deployment=export_for_deployment)

    def save_persistables(self, executor, dirname, main_program=None):
        _check_executor(executor, "save_persistables")
        if isinstance(main_program, CompiledProgram):
            raise TypeError("fleet.save_persistables: main_program must be a Program, not a CompiledProgram")
        self._need_minimized("save_persistables")
        main_program = main_program or self.main_program
        if not main_program._is_distributed:
            raise ValueError("fleet.save_persistables: main_program is a local program (not transpiled)")
        io.save_persistables(executor, dirname, main_program)

    # helpers ---------------------------------------------------------------------------------------
    def _need_minimized(self, what):
        if self.main_program is None:
            raise ValueError("fleet.%s: call fleet.distributed_optimizer(...).minimize(loss) first" % what)

    def _transpile(self, strategy, program, startup_program):
        config = strategy.get_program_config() if isinstance(strategy, DistributedStrategy) else strategy
        if not isinstance(strategy, DistributedStrategy) and not config.sync_mode and \
                not config.runtime_split_send_recv and not getattr(config, "geo_sgd_mode", False):
            # Paddle 1.8's fleet: a not-sync config that does not split at run time trains half-async
            config.half_async = True
            config.runtime_split_send_recv = True
        self._strategy = strategy
        self._origin_program = program.clone()
        t = DistributeTranspiler(config=config)
        servers = self.server_endpoints(to_string=True)
        sync_mode = config.sync_mode or config.completely_not_async    # (see SyncStrategy)
        if self.is_worker():
            t.transpile(trainer_id=self.worker_index(), program=program, startup_program=startup_program,
                        pservers=servers, trainers=self.worker_num(), sync_mode=sync_mode)
            self.main_program = t.get_trainer_program(wait_port=config.wait_port)
            self.startup_program = startup_program
            plan = trainer_plan(self.main_program)
            if plan is not None and plan.half_async:
                # the communicator's settings travel with the program (checked here, naming a bad field)
                runtime = strategy.get_trainer_runtime_config() if isinstance(strategy, DistributedStrategy) \
                    else TrainerRuntimeConfig()
                flags = runtime.get_communicator_flags()
                for prog in (self.main_program, self.startup_program):
                    set_trainer_plan(prog, dataclasses.replace(plan, communicator_flags=flags))
        else:
            me = self.server_endpoints()[self.server_index()]
            t.transpile(trainer_id=0, program=program, startup_program=startup_program, pservers=servers,
                        trainers=self.worker_num(), sync_mode=sync_mode, current_endpoint=me)
            self.main_program, self.startup_program = t.get_pserver_programs(me)
        self._transpiler = t


def _check_executor(executor, what):
    if isinstance(executor, ParallelExecutor):
        raise TypeError("fleet.%s: executor must be an Executor, not a ParallelExecutor" % what)
    if not isinstance(executor, Executor):
        raise TypeError("fleet.%s: executor must be a fluid.Executor, got %s" % (what, type(executor).__name__))


class TranspilerOptimizer(DistributedOptimizer):
    def __init__(self, optimizer, strategy=None):
        super().__init__(optimizer, strategy)
        if strategy is None:
            strategy = StrategyFactory.create_sync_strategy()
        elif not isinstance(strategy, (DistributeTranspilerConfig, DistributedStrategy)):
            raise TypeError("in pserver mode, strategy must be a DistributeTranspilerConfig or one of "
                            "StrategyFactory's strategies (sync, async, half_async, geo), got %s"
                            % type(strategy).__name__)
        self._strategy = strategy

    def minimize(self, loss, scope=None, startup_program=None, parameter_list=None, no_grad_set=None):
        if isinstance(loss, list):
            raise TypeError("fleet's minimize takes one loss Variable, not a list")
        if isinstance(startup_program, list):
            raise TypeError("fleet's minimize takes one startup_program, not a list")
        if not isinstance(loss, Variable):
            raise TypeError("minimize: loss must be a Variable, got %s" % type(loss).__name__)
        program = loss.block.program
        startup = startup_program or default_startup_program()
        ops, params_grads = self._optimizer.minimize(loss, startup, parameter_list, no_grad_set)
        fleet._transpile(self._strategy, program, startup)
        return ops, params_grads


fleet = DistributedTranspiler()
