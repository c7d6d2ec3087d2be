"""StrategyFactory and the pserver-mode strategies of Fleet (Paddle 1.7+). Each carries a
DistributeTranspilerConfig (get_program_config) plus runtime settings kept for compatibility."""

import os

from .....compiler import BuildStrategy, ExecutionStrategy
from .....transpiler import DistributeTranspilerConfig
from .....transpiler.distribute_transpiler import ServerRuntimeConfig
from ......backends.ps.communicator_flags import default_flags, parse_flags

__all__ = ["TrainerRuntimeConfig", "ServerRuntimeConfig", "DistributedStrategy", "SyncStrategy", "AsyncStrategy",
           "HalfAsyncStrategy", "GeoStrategy", "StrategyFactory"]


class TrainerRuntimeConfig:
    """Paddle's communicator flags (FLAGS_communicator_* from the environment, else Paddle 1.8's defaults).
    The half-async strategy's communicator uses max_merge_var_num, send_queue_size, thread_pool_size and
    send_wait_times (backends/ps/half_async.py); the async trainer batches one RPC per pserver per step by
    itself, so there they are checked and kept. Paddle 1.8 also carried rpc_deadline and rpc_retry_times
    here (unused)."""

    def __init__(self):
        self.runtime_configs = default_flags()
        self.runtime_configs["rpc_deadline"] = os.getenv("FLAGS_rpc_deadline", "180000")
        self.runtime_configs["rpc_retry_times"] = os.getenv("FLAGS_rpc_retry_times", "3")

    def get_communicator_flags(self):
        """The flags as strings; a value that is not a valid integer is an error naming its field."""
        parse_flags(self.runtime_configs)
        return {k: str(v) for k, v in self.runtime_configs.items()}

    def __repr__(self):
        return "TrainerRuntimeConfig(%s)" % self.runtime_configs


class DistributedStrategy:
    def __init__(self):
        self._program_config = DistributeTranspilerConfig()
        self._trainer_runtime_config = TrainerRuntimeConfig()
        self._server_runtime_config = ServerRuntimeConfig()
        self._execute_strategy = ExecutionStrategy()
        self._build_strategy = BuildStrategy()
        self._execute_strategy.num_threads = int(os.getenv("CPU_NUM", "1"))

    def get_program_config(self):
        return self._program_config

    def set_program_config(self, config):
        if isinstance(config, DistributeTranspilerConfig):
            self._program_config = config
        elif isinstance(config, dict):
            for k, v in config.items():
                if not hasattr(self._program_config, k):
                    raise ValueError("DistributeTranspilerConfig has no field %r" % k)
                setattr(self._program_config, k, v)
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
            raise TypeError("trainer_runtime_config must be a TrainerRuntimeConfig or a dict")

    def get_server_runtime_config(self):
        return self._server_runtime_config

    def set_server_runtime_config(self, config):
        if not isinstance(config, ServerRuntimeConfig):
            raise TypeError("server_runtime_config must be a ServerRuntimeConfig")
        self._server_runtime_config = config

    def get_execute_strategy(self):
        return self._execute_strategy

    def set_execute_strategy(self, config):
        if not isinstance(config, ExecutionStrategy):
            raise TypeError("execute_strategy must be a fluid.ExecutionStrategy")
        self._execute_strategy = config

    def get_build_strategy(self):
        return self._build_strategy

    def set_build_strategy(self, config):
        if not isinstance(config, BuildStrategy):
            raise TypeError("build_strategy must be a fluid.BuildStrategy")
        self._build_strategy = config

    def check_program_config(self):
        pass


class _PresetStrategy(DistributedStrategy):
    """A strategy is a DistributeTranspilerConfig preset: PRESET's fields are (re)applied on every check."""
    PRESET = {}

    def __init__(self):
        super().__init__()
        self.check_program_config()

    def check_program_config(self):
        # runtime_split_send_recv=True is refused while sync_mode is True: clear sync first, set it last
        preset = dict(self.PRESET)
        if not preset.get("sync_mode", True):
            self._program_config.sync_mode = False
        for k, v in preset.items():
            setattr(self._program_config, k, v)


class SyncStrategy(_PresetStrategy):
    PRESET = {"runtime_split_send_recv": False, "sync_mode": True}


class AsyncStrategy(_PresetStrategy):
    PRESET = {"sync_mode": False, "runtime_split_send_recv": True}

    def set_debug_opt(self, opt_info):
        """Paddle 1.8's trainer dump options (dump_fields_path, dump_fields, dump_param). Accepted and kept
        in debug_opt; the dumps themselves are not written (Paddle's dataset trainers write them)."""
        if not isinstance(opt_info, dict):
            raise TypeError("set_debug_opt takes a dict, got %s" % type(opt_info).__name__)
        self.debug_opt = dict(opt_info)


class HalfAsyncStrategy(_PresetStrategy):
    """Half-async: each trainer's communicator queues its runners' gradients, merges up to
    communicator_max_merge_var_num of each, sends them once per round and hands back the parameters
    (backends/ps/half_async.py); the pservers apply what arrives, as in async."""
    PRESET = {"sync_mode": False, "runtime_split_send_recv": True, "half_async": True}


class GeoStrategy(_PresetStrategy):
    """Geo-SGD: trainers update locally and push parameter deltas every `update_frequency` steps."""
    PRESET = {"sync_mode": False, "runtime_split_send_recv": True, "geo_sgd_mode": True}

    def __init__(self, update_frequency=100):
        if not isinstance(update_frequency, int) or update_frequency <= 0:
            raise ValueError("GeoStrategy: update_frequency must be a positive int, got %r" % (update_frequency,))
        super().__init__()
        self._program_config.geo_sgd_need_push_nums = update_frequency


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
