"""fluid.communicator.Communicator: start/stop/is_running over this package's parameter-server client.

In Paddle 1.8 it owns the background threads that send gradients in async mode. Here the trainer's RPC
ops send through the trainer's connection to its job (backends/ps/connections.py), so the Communicator's job
is that connection's life cycle: start() joins the pservers named by the transpiled trainer program (the
Communicator holds the connection beside the Executors that run the program), stop() tells them this trainer
is done.
A half-async program's send thread (backends/ps/half_async.py) starts at its first step, with the
communicator flags of `envs` when given.
"""

import dataclasses

from .transpiler.distribute_transpiler import DistributedMode  # noqa: F401  (Paddle 1.8 imports it from here)
from ..backends.ps import connections
from ..backends.ps.records import set_trainer_plan, trainer_plan
from ..backends.ps.communicator_flags import FLAG_FIELDS, parse_flags

__all__ = ["Communicator"]

_ACCEPTED = ("mode", "kwargs", "envs", "vars_info", "trainers", "geo_sgd_need_push_nums")


class Communicator:
    def __init__(self, program, *args, **kwargs):
        """Paddle 1.8's Communicator(program, mode, kwargs=None, envs={}) and 1.7's (program, vars_info,
        trainers, geo_sgd_need_push_nums, envs) both work: the mode and send settings are the transpiled
        program's own, so the arguments after `program` are accepted and not needed."""
        unknown = sorted(set(kwargs) - set(_ACCEPTED))
        if unknown or len(args) > 4:
            raise TypeError("Communicator() got unexpected arguments %s" % (unknown or list(args[4:])))
        info = trainer_plan(program)
        if info is None:
            raise ValueError("Communicator needs a trainer program from DistributeTranspiler.get_trainer_program"
                             "() (program %r has no pserver endpoints)" % (program,))
        envs = kwargs.get("envs", args[2] if len(args) > 2 and isinstance(args[2], dict) else None)
        if envs and info.half_async:
            # Paddle's envs carry the communicator flags (TrainerRuntimeConfig.get_communicator_flags())
            flags = {k: v for k, v in envs.items() if k in FLAG_FIELDS}
            parse_flags(flags, "Communicator envs")
            info = dataclasses.replace(info, communicator_flags=dict(info.communicator_flags or {}, **flags))
            set_trainer_plan(program, info)     # the program's runtime reads them from its ops
        self._info = info
        self._client = None

    def start(self):
        if self.is_running():
            raise RuntimeError("Communicator.start(): already running")
        self._client = connections.acquire(self._info, self)
        self._client.ensure_joined()

    def stop(self):
        if self._client is not None:
            self._client.close()

    def is_running(self):
        return self._client is not None and self._client.joined and not self._client.closed
