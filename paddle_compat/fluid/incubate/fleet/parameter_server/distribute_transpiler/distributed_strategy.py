"""StrategyFactory and the pserver-mode strategies of Fleet (Paddle 1.7+). Each carries a
DistributeTranspilerConfig (get_program_config) plus runtime settings kept for compatibility."""

import os
import warnings

from .....compiler import BuildStrategy, ExecutionStrategy
from .....transpiler import DistributeTranspilerConfig
from .....transpiler.distribute_transpiler import DistributedMode, ServerRuntimeConfig
from ......backends.ps.communicator_flags import default_flags, parse_flags

__all__ = ["TrainerRuntimeConfig", "ServerRuntimeConfig", "DistributedStrategy", "SyncStrategy", "AsyncStrategy",
           "HalfAsyncStrategy", "GeoStrategy", "StrategyFactory"]


class TrainerRuntimeConfig:
    """Paddle's communicator flags (FLAGS_communicator_* from the environment, else Paddle 1.8's defaults).
    The half-async strategy's communicator uses max_merge_var_num, send_queue_size, thread_pool_size and
    send_wait_times (backends/ps/half_async.py); the async trainer batches one RPC per pserver per step by
    itself, so there they are checked and kept. Paddle 1.8 also carried rpc_deadline and rpc_retry_times
    here (unused). `mode` is the strategy's DistributedMode (set by the strategy; None: all flags)."""

    # the flags each mode's communicator reads (Paddle 1.8's lists)
    _MODE_KEYS = {DistributedMode.SYNC: ("communicator_max_merge_var_num", "communicator_send_wait_times",
                                         "communicator_thread_pool_size", "communicator_send_queue_size"),
                  DistributedMode.GEO: ("communicator_thread_pool_size", "communicator_send_wait_times")}
    _MODE_KEYS[DistributedMode.HALF_ASYNC] = _MODE_KEYS[DistributedMode.SYNC]

    def __init__(self):
        self.mode = None
        self.runtime_configs = default_flags()
        self.runtime_configs["rpc_deadline"] = os.getenv("FLAGS_rpc_deadline", "180000")
        self.runtime_configs["rpc_retry_times"] = os.getenv("FLAGS_rpc_retry_times", "3")

    def get_communicator_flags(self):
        """The flags this mode's communicator reads, as strings; a value that is not a valid integer is an
        error naming its field. In sync and half-async mode the merge count and the queue size are CPU_NUM
        (Paddle 1.8 forces them, with a warning, and so do we)."""
        parse_flags(self.runtime_configs)
        if self.mode is None or self.mode == DistributedMode.ASYNC:
            keys = list(self.runtime_configs)
        elif self.mode in self._MODE_KEYS:
            keys = self._MODE_KEYS[self.mode]
        else:
            raise ValueError("TrainerRuntimeConfig: unsupported mode %r" % (self.mode,))
        if self.mode in (DistributedMode.SYNC, DistributedMode.HALF_ASYNC):
            cpu_num = os.getenv("CPU_NUM", "1")
            for key in ("communicator_max_merge_var_num", "communicator_send_queue_size"):
                if str(self.runtime_configs[key]) != cpu_num:
                    warnings.warn("TrainerRuntimeConfig: in sync or half_async mode %s must equal CPU_NUM; %s "
                                  "becomes %s" % (key, self.runtime_configs[key], cpu_num))
                    self.runtime_configs[key] = cpu_num
        return {k: str(self.runtime_configs[k]) for k in keys}

    def __repr__(self):
        return "TrainerRuntimeConfig(%s)" % self.runtime_configs


def _set_fields(target, config, what):
    for key, value in config.items():
        if not hasattr(target, key):
            raise ValueError("%s has no field %r" % (what, key))
        setattr(target, key, value)


class DistributedStrategy:
    """The settings of a pserver-mode Fleet job. Made by StrategyFactory: each strategy applies its preset
    (Paddle 1.8's check_* methods) when created and again after each set_* call."""

    def __init__(self):
        self._program_config = DistributeTranspilerConfig()
        self._trainer_runtime_config = TrainerRuntimeConfig()
        self._server_runtime_config = ServerRuntimeConfig()
        num_threads = int(os.getenv("CPU_NUM", "1"))
        self._execute_strategy = ExecutionStrategy()
        self._build_strategy = BuildStrategy()
        self._execute_strategy.num_threads = num_threads
        if num_threads > 1:
            self._build_strategy.reduce_strategy = BuildStrategy.ReduceStrategy.Reduce
        self.debug_opt = None

    def _check_all(self):
        self.check_program_config()
        self.check_trainer_runtime_config()
        self.check_server_runtime_config()
        self.check_build_strategy()
        self.check_execute_strategy()

    def set_debug_opt(self, opt_info):
        """Paddle 1.8's trainer dump options (dump_fields_path, dump_fields, dump_param, ...). Accepted and
        kept (get_debug_opt reads them with Paddle's defaults); the dumps themselves are not written."""
        self.debug_opt = opt_info

    def get_debug_opt(self):
        opt = self.debug_opt
        if not isinstance(opt, dict):
            return {}
        return {"dump_slot": bool(opt.get("dump_slot", 0)), "dump_converter": str(opt.get("dump_converter", "")),
                "dump_fields": opt.get("dump_fields", []), "dump_file_num": opt.get("dump_file_num", 16),
                "dump_fields_path": opt.get("dump_fields_path", ""), "dump_param": opt.get("dump_param", [])}

    def get_program_config(self):
        return self._program_config

    def set_program_config(self, config):
        if isinstance(config, DistributeTranspilerConfig):
            self._program_config = config
        elif isinstance(config, dict):
            _set_fields(self._program_config, config, "DistributeTranspilerConfig")
        else:
            raise TypeError("program_config must be a DistributeTranspilerConfig or a dict, got %s"
                            % type(config).__name__)
        self.check_program_config()

    def get_trainer_runtime_config(self):
        return self._trainer_runtime_config

    def set_trainer_runtime_config(self, config):
        if isinstance(config, TrainerRuntimeConfig):
            parse_flags(config.runtime_configs)
            self._trainer_runtime_config = config
        elif isinstance(config, dict):
            known = self._trainer_runtime_config.runtime_configs
            for key in config:
                if key not in known:
                    raise ValueError("TrainerRuntimeConfig has no field %r (fields: %s)" % (key, ", ".join(known)))
            parse_flags(config)
            known.update(config)
        else:
            raise TypeError("trainer_runtime_config must be a TrainerRuntimeConfig or a dict, got %s"
                            % type(config).__name__)
        self.check_trainer_runtime_config()

    def get_server_runtime_config(self):
        return self._server_runtime_config

    def set_server_runtime_config(self, config):
        if isinstance(config, ServerRuntimeConfig):
            self._server_runtime_config = config
        elif isinstance(config, dict):
            _set_fields(self._server_runtime_config, config, "ServerRuntimeConfig")
        else:
            raise TypeError("server_runtime_config must be a ServerRuntimeConfig or a dict, got %s"
                            % type(config).__name__)
        self.check_server_runtime_config()

    def get_execute_strategy(self):
        return self._execute_strategy

    def set_execute_strategy(self, config):
        if isinstance(config, ExecutionStrategy):
            self._execute_strategy = config
        elif isinstance(config, dict):
            _set_fields(self._execute_strategy, config, "ExecutionStrategy")
        else:
            raise TypeError("execute_strategy must be a fluid.ExecutionStrategy or a dict, got %s"
                            % type(config).__name__)
        self.check_execute_strategy()

    def get_build_strategy(self):
        return self._build_strategy

    def set_build_strategy(self, config):
        if isinstance(config, BuildStrategy):
            self._build_strategy = config
        elif isinstance(config, dict):
            _set_fields(self._build_strategy, config, "BuildStrategy")
        else:
            raise TypeError("build_strategy must be a fluid.BuildStrategy or a dict, got %s" % type(config).__name__)
        self.check_build_strategy()

    def check_program_config(self):
        pass

    def check_trainer_runtime_config(self):
        pass

    def check_server_runtime_config(self):
        pass

    def check_execute_strategy(self):
        pass

    def check_build_strategy(self):
        self._build_strategy.async_mode = True


class SyncStrategy(DistributedStrategy):
    """Paddle 1.8's sync strategy: a not-sync, run-time-split config marked completely_not_async, which its
    transpiler trains with barriers (sum of the trainers' gradients each step). Our transpiler reads
    completely_not_async as sync mode (DistributeTranspilerConfig.frozen)."""

    def __init__(self):
        super().__init__()
        self._check_all()

    def check_trainer_runtime_config(self):
        self._trainer_runtime_config.mode = DistributedMode.SYNC

    def check_program_config(self):
        self._program_config.sync_mode = False
        self._program_config.runtime_split_send_recv = True
        self._program_config.half_async = True
        self._program_config.completely_not_async = True

    def check_execute_strategy(self):
        self._execute_strategy.use_thread_barrier = True


class AsyncStrategy(DistributedStrategy):
    def __init__(self):
        super().__init__()
        self._check_all()

    def check_trainer_runtime_config(self):
        self._trainer_runtime_config.mode = DistributedMode.ASYNC

    def check_program_config(self):
        self._program_config.sync_mode = False
        self._program_config.runtime_split_send_recv = True


class HalfAsyncStrategy(DistributedStrategy):
    """Half-async: each trainer's communicator queues its runners' gradients, merges up to
    communicator_max_merge_var_num of each, sends them once per round and hands back the parameters
    (backends/ps/half_async.py); the pservers apply what arrives, as in async."""

    def __init__(self):
        super().__init__()
        self._check_all()

    def check_trainer_runtime_config(self):
        self._trainer_runtime_config.mode = DistributedMode.HALF_ASYNC

    def check_program_config(self):
        self._program_config.sync_mode = False
        self._program_config.runtime_split_send_recv = True
        self._program_config.half_async = True

    def check_execute_strategy(self):
        self._execute_strategy.use_thread_barrier = True


class GeoStrategy(DistributedStrategy):
    """Geo-SGD: trainers update locally and push parameter deltas every `update_frequency` steps."""

    def __init__(self, update_frequency=100):
        if not isinstance(update_frequency, int) or update_frequency <= 0:
            raise ValueError("GeoStrategy: update_frequency must be a positive int, got %r" % (update_frequency,))
        super().__init__()
        self._program_config.geo_sgd_need_push_nums = update_frequency
        self._check_all()

    def check_trainer_runtime_config(self):
        self._trainer_runtime_config.mode = DistributedMode.GEO

    def check_program_config(self):
        self._program_config.sync_mode = False
        self._program_config.runtime_split_send_recv = True
        self._program_config.geo_sgd_mode = True


class StrategyFactory:
    @staticmethod
    def create_sync_strategy():
        return SyncStrategy()

    @staticmethod
    def create_half_async_strategy():
        return HalfAsyncStrategy()

    @staticmethod
    def create_async_strategy():
        return AsyncStrategy()

    @staticmethod
    def create_geo_strategy(update_frequency=100):
        return GeoStrategy(update_frequency)
