"""GeoSgdTranspiler (Paddle 1.8's module path): the DistributeTranspiler in Geo-SGD mode.

Paddle 1.8 keeps a separate transpiler class for Geo-SGD; here Geo-SGD is a mode of the one pserver pass
(pserver_passes.py, ps_geo.py), so this class only switches that mode on for its config."""

import copy

from .config import DistributeTranspilerConfig
from .distribute_transpiler import DistributeTranspiler

__all__ = ["GeoSgdTranspiler"]


class GeoSgdTranspiler(DistributeTranspiler):
    def __init__(self, config=None):
        if config is not None and not isinstance(config, DistributeTranspilerConfig):
            raise TypeError("GeoSgdTranspiler(config=...) expects a DistributeTranspilerConfig, got %s"
                            % type(config).__name__)
        config = copy.copy(config) if config is not None else DistributeTranspilerConfig()
        config.geo_sgd_mode = True    # the caller's config is left as it was
        super().__init__(config)

    def transpile(self, trainer_id, program=None, pservers="127.0.0.1:6174", trainers=1, sync_mode=False,
                  startup_program=None, current_endpoint="127.0.0.1:6174"):
        # Geo-SGD is asynchronous: Paddle's default sync_mode here is False
        return super().transpile(trainer_id, program=program, pservers=pservers, trainers=trainers,
                                 sync_mode=sync_mode, startup_program=startup_program,
                                 current_endpoint=current_endpoint)
