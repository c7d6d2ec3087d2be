"""DistributeTranspiler: a thin facade. It validates arguments, freezes the config, and chains pure passes:
pserver mode (pserver_passes.py), nccl2 mode (nccl2.py), collective mode (collective.py)."""

import os

from ...ir import Program, default_main_program, default_startup_program
from .config import DistributeTranspilerConfig
from ...backends.endpoints import parse_endpoint, parse_endpoints
from .pserver_passes import transpile_pserver
from .nccl2 import transpile_nccl2
from .collective import transpile_collective
from .ps_slicing import slice_variable  # noqa: F401  (Paddle's tests import it from here)

__all__ = ["DistributeTranspiler", "DistributeTranspilerConfig", "ServerRuntimeConfig", "DistributedMode"]


class DistributedMode:
    """Paddle 1.8's mode numbers (programs record them as the `distributed_mode` attr)."""
    SYNC = 0
    ASYNC = 1
    HALF_ASYNC = 2
    GEO = 3


class ServerRuntimeConfig:
    """Paddle's pserver RPC thread counts; kept for scripts that set them (the RPC layer here sizes itself)."""

    def __init__(self):
        self._rpc_send_thread_num = int(os.getenv("FLAGS_rpc_send_thread_num", "12"))
        self._rpc_get_thread_num = int(os.getenv("FLAGS_rpc_get_thread_num", "12"))
        self._rpc_prefetch_thread_num = int(os.getenv("FLAGS_rpc_prefetch_thread_num", "12"))


class DistributeTranspiler:
    def __init__(self, config=None):
        if config is not None and not isinstance(config, DistributeTranspilerConfig):
            raise TypeError("DistributeTranspiler(config=...) expects a DistributeTranspilerConfig, got %s"
                            % type(config).__name__)
        self.config = config if config is not None else DistributeTranspilerConfig()
        self._result = None

    def transpile(self, trainer_id, program=None, pservers="127.0.0.1:6174", trainers=1, sync_mode=True,
                  startup_program=None, current_endpoint="127.0.0.1:6174", **kwargs):
        if "workers" in kwargs:   # the seed docs' nccl2 example spells `trainers` as `workers`
            trainers = kwargs.pop("workers")
        if kwargs:
            raise TypeError("transpile() got unexpected arguments %s" % sorted(kwargs))
        if not isinstance(trainer_id, int) or isinstance(trainer_id, bool) or trainer_id < 0:
            raise ValueError("transpile: trainer_id must be a non-negative int, got %r" % (trainer_id,))
        program = program if program is not None else default_main_program()
        startup_program = startup_program if startup_program is not None else default_startup_program()
        if not isinstance(program, Program) or not isinstance(startup_program, Program):
            raise TypeError("transpile: program and startup_program must be fluid.Program")
        cfg = self.config.frozen()
        if cfg.mode == "pserver":
            if not isinstance(trainers, int) or isinstance(trainers, bool) or trainers < 1:
                raise ValueError("transpile: in pserver mode trainers is the number of trainers (an int >= 1), "
                                 "got %r" % (trainers,))
            if trainer_id >= trainers:
                raise ValueError("transpile: trainer_id %d is out of range for %d trainers" % (trainer_id, trainers))
            eps = parse_endpoints(pservers, "pservers", server=True)
            # Paddle ignores current_endpoint in pserver mode (its test_dist_base passes None)
            if current_endpoint is None:
                current_endpoint = "127.0.0.1:6174"
            self._result = transpile_pserver(cfg, program, startup_program, trainer_id, eps, trainers,
                                             bool(sync_mode) and cfg.sync_mode,
                                             current_endpoint=parse_endpoint(current_endpoint, "current_endpoint"))
            return
        eps = parse_endpoints(trainers, "trainers") if not isinstance(trainers, (list, tuple)) else \
            parse_endpoints(",".join(trainers), "trainers")
        current = parse_endpoint(current_endpoint, "current_endpoint")
        if trainer_id >= len(eps):
            raise ValueError("transpile: trainer_id %d is out of range for %d trainer endpoints" % (trainer_id, len(eps)))
        if current != eps[trainer_id]:
            raise ValueError("transpile: current_endpoint %s is not trainer %d's endpoint %s (trainers=%s)"
                             % (current, trainer_id, eps[trainer_id], ",".join(eps)))
        if cfg.mode == "nccl2":
            self._result = transpile_nccl2(cfg, program, startup_program, trainer_id, eps, current)
        else:
            self._result = transpile_collective(cfg, program, startup_program, trainer_id, eps, current)

    def _pserver_result(self):
        if self._result is None or not hasattr(self._result, "trainer_program"):
            raise RuntimeError("call transpile(...) in pserver mode before asking for trainer/pserver programs")
        return self._result

    def get_trainer_program(self, wait_port=True):
        return self._pserver_result().trainer_program(wait_port)

    def get_pserver_program(self, endpoint):
        return self._pserver_result().pserver_program(parse_endpoint(endpoint, "endpoint", server=True))

    def get_pserver_programs(self, endpoint):
        ep = parse_endpoint(endpoint, "endpoint", server=True)
        return self._pserver_result().pserver_program(ep), self._pserver_result().pserver_startup_program(ep)

    def get_startup_program(self, endpoint, pserver_program=None, startup_program=None):
        """Deprecated form of get_pserver_programs(endpoint)[1]."""
        return self._pserver_result().pserver_startup_program(parse_endpoint(endpoint, "endpoint", server=True))
