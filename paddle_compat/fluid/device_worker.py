"""fluid.device_worker: what a trainer description (fluid.trainer_desc) says each of its threads runs.
Hogwild (threads sharing the parameters) writes its part; Paddle's pslib and pipeline workers (DownpourSGD,
DownpourSGDOPT, Section) are not offered."""

__all__ = ["DeviceWorker", "Hogwild"]


class DeviceWorker:
    def __init__(self):
        self._program = None
        self._infer = None
        self._fleet_desc = None

    def _set_infer(self, infer=False):
        self._infer = infer

    def _set_fleet_desc(self, fleet_desc):
        self._fleet_desc = fleet_desc

    def _set_program(self, program):
        self._program = program

    def _gen_worker_desc(self, trainer_desc):
        raise NotImplementedError("DeviceWorker does not implement gen_worker_desc, please use Hogwild or "
                                  "DownpourSGD, etc.")


class Hogwild(DeviceWorker):
    def _gen_worker_desc(self, trainer_desc):
        if self._program is None:
            raise RuntimeError("Hogwild: the program of the device worker is not set")
        trainer_desc.device_worker_name = "HogwildWorker"
        if self._infer:       # an inference run skips the feed ops
            trainer_desc.hogwild_param.skip_ops.append("feed")
        opt_info = getattr(self._program, "_fleet_opt", None)
        if opt_info and "fleet_desc" in opt_info:     # (a transpiler fleet's options add nothing here)
            raise NotImplementedError("Hogwild with a pslib fleet's program configs is pslib only")
