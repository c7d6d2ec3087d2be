"""DistributeTranspilerConfig: every field and default of Paddle 1.x, with its validation."""

import copy

from .ps_dispatcher import PSDispatcher, RoundRobin

__all__ = ["DistributeTranspilerConfig", "MODES", "COLLECTIVE_MODES"]

MODES = ("pserver", "nccl2", "collective")
COLLECTIVE_MODES = ("grad_allreduce", "local_sgd")


class DistributeTranspilerConfig:
    slice_var_up = True
    split_method = None          # None -> RoundRobin
    min_block_size = 8192
    enable_dc_asgd = False
    mode = "pserver"
    collective_mode = None
    print_log = False
    wait_port = True
    geo_sgd_mode = False
    geo_sgd_need_push_nums = 100
    nccl_comm_num = 1
    use_hierarchical_allreduce = False
    hierarchical_allreduce_inter_nranks = 0
    half_async = False           # set by fleet's StrategyFactory.create_half_async_strategy
    completely_not_async = False  # set by fleet's StrategyFactory.create_sync_strategy (with half_async)

    def __init__(self):
        self._sync_mode = True
        self._runtime_split_send_recv = False

    @property
    def sync_mode(self):
        return self._sync_mode

    @sync_mode.setter
    def sync_mode(self, value):
        if value is None:
            raise ValueError("sync_mode can't be None")
        if value and self._runtime_split_send_recv:
            raise ValueError("if you want to set sync_mode to be true, make ensure "
                             "config.runtime_split_send_recv is false at first")
        self._sync_mode = bool(value)

    @property
    def runtime_split_send_recv(self):
        return self._runtime_split_send_recv

    @runtime_split_send_recv.setter
    def runtime_split_send_recv(self, value):
        if value is None:
            raise ValueError("runtime_split_send_recv can't be None")
        if value and self._sync_mode:
            raise ValueError("if you want to set runtime_split_send_recv to be true, make ensure "
                             "config.sync_mode is false at first")
        self._runtime_split_send_recv = bool(value)

    def frozen(self):
        """A validated copy that the passes read (they never see later edits of the user's object)."""
        c = copy.copy(self)
        if c.completely_not_async:
            # Paddle 1.8's sync strategy: not sync_mode, split at run time, half_async, completely_not_async;
            # its transpiler then trains as sync mode does (barriers, the trainers' gradients summed each
            # step), which is our sync mode
            c._sync_mode, c._runtime_split_send_recv, c.half_async = True, False, False
        if c.split_method is None:
            c.split_method = RoundRobin
        if not (isinstance(c.split_method, type) and issubclass(c.split_method, PSDispatcher)):
            raise TypeError("config.split_method must be RoundRobin, HashName or another PSDispatcher subclass, "
                            "got %r" % (c.split_method,))
        if c.mode not in MODES:
            raise ValueError("config.mode must be one of %s, got %r" % (", ".join(MODES), c.mode))
        if not isinstance(c.min_block_size, int) or c.min_block_size < 8192:
            # Paddle asserted this: smaller blocks make RPCs too small to use the bandwidth.
            raise ValueError("config.min_block_size must be an int >= 8192, got %r" % (c.min_block_size,))
        if c.mode == "collective" and c.collective_mode not in COLLECTIVE_MODES:
            raise ValueError("config.collective_mode must be one of %s in collective mode, got %r"
                             % (", ".join(COLLECTIVE_MODES), c.collective_mode))
        if not isinstance(c.nccl_comm_num, int) or c.nccl_comm_num < 1:
            raise ValueError("config.nccl_comm_num must be a positive int, got %r" % (c.nccl_comm_num,))
        return c

    def __repr__(self):
        fields = ["slice_var_up", "split_method", "min_block_size", "enable_dc_asgd", "mode", "collective_mode",
                  "sync_mode", "runtime_split_send_recv", "geo_sgd_mode", "nccl_comm_num"]
        return "DistributeTranspilerConfig(%s)" % ", ".join("%s=%r" % (f, getattr(self, f)) for f in fields)
