"""Fleet and DistributedOptimizer base classes, shared by the collective and parameter-server fleets."""

from ....contrib.mixed_precision.decorator import OptimizerWithMixedPrecision
from ....optimizer.base import Optimizer
from .mode import Mode
from .role_maker import RoleMakerBase

__all__ = ["Mode", "Fleet", "DistributedOptimizer"]


class Fleet:
    """A singleton per mode (`fleet`): init(role_maker), then who-is-who queries, distributed_optimizer(...)
    and the programs its minimize produced (main_program, startup_program)."""

    def __init__(self, mode):
        self._mode = mode
        self._is_initialized = False
        self._role_maker = None
        self._optimizer = None
        self.main_program = None
        self.startup_program = None

    def _default_role_maker(self):
        raise ValueError("fleet.init(role_maker): a role maker is required in this mode")

    def init(self, role_maker=None):
        if role_maker is None:
            role_maker = self._default_role_maker()
        if not isinstance(role_maker, RoleMakerBase):
            raise TypeError("fleet.init: role_maker must be a RoleMakerBase (PaddleCloudRoleMaker, "
                            "UserDefinedCollectiveRoleMaker, ...), got %s" % type(role_maker).__name__)
        role_maker.generate_role()
        self._role_maker = role_maker
        self._is_initialized = True

    def _rm(self):
        if not self._is_initialized:
            raise RuntimeError("call fleet.init(role_maker) first")
        return self._role_maker

    def is_first_worker(self):
        return self._rm().is_first_worker()

    def worker_index(self):
        return self._rm().worker_index()

    def worker_num(self):
        return self._rm().worker_num()

    def is_worker(self):
        return self._rm().is_worker()

    def is_server(self):
        return self._rm().is_server()

    def server_num(self):
        return len(self._rm().get_pserver_endpoints())

    def server_index(self):
        return self._rm().server_index()

    def worker_endpoints(self, to_string=False):
        eps = self._rm().get_trainer_endpoints()
        return ",".join(eps) if to_string else eps

    def server_endpoints(self, to_string=False):
        eps = self._rm().get_pserver_endpoints()
        return ",".join(eps) if to_string else eps

    def split_files(self, files):
        """This worker's contiguous share of `files`; the first len(files) % worker_num workers get one more."""
        if not isinstance(files, list):
            raise TypeError("split_files: files must be a list, got %s" % type(files).__name__)
        n, me = self.worker_num(), self.worker_index()
        base, extra = divmod(len(files), n)
        start = me * base + min(me, extra)
        return files[start:start + base + (1 if me < extra else 0)]

    def barrier_worker(self):
        self._rm().barrier_worker()

    # implemented by each mode
    def init_worker(self):
        raise NotImplementedError

    def init_server(self, model_dir=None):
        raise NotImplementedError

    def run_server(self):
        raise NotImplementedError

    def stop_worker(self):
        raise NotImplementedError

    def distributed_optimizer(self, optimizer, strategy=None):
        raise NotImplementedError

    def save_inference_model(self, executor, dirname, feeded_var_names, target_vars, main_program=None,
                             export_for_deployment=True):
        raise NotImplementedError

    def save_persistables(self, executor, dirname, main_program=None):
        raise NotImplementedError


class DistributedOptimizer:
    """Wraps a fluid optimizer; minimize() builds the local program, then the distributed one."""

    def __init__(self, optimizer, strategy=None):
        # as Paddle 1.8: an optimizer, or one decorated for mixed precision (contrib.mixed_precision.decorate)
        if not isinstance(optimizer, (Optimizer, OptimizerWithMixedPrecision)):
            raise TypeError("optimizer must be a fluid.optimizer.Optimizer (SGD, Adam, ...) or "
                            "OptimizerWithMixedPrecision, got %s" % type(optimizer).__name__)
        self._optimizer = optimizer
        self._strategy = strategy

    def backward(self, loss, startup_program=None, parameter_list=None, no_grad_set=None, callbacks=None):
        return self._optimizer.backward(loss, startup_program, parameter_list, no_grad_set, callbacks)

    def apply_gradients(self, params_grads):
        return self._optimizer.apply_gradients(params_grads)

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        raise NotImplementedError
