"""FleetUtil: the rank-0 logging and file-splitting helpers of Paddle 1.8's fleet_util that scripts use.

Paddle's pslib/HDFS helpers (model donefiles, xbox, ...) are not provided: they need Baidu's pslib and HDFS.
"""

import logging

import numpy as np
from .....ir import global_scope
from ..parameter_server.distribute_transpiler import fleet

__all__ = ["FleetUtil"]

_logger = logging.getLogger("fleet_util")
if not _logger.handlers:
    _h = logging.StreamHandler()
    _h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    _logger.addHandler(_h)
    _logger.setLevel(logging.INFO)
    _logger.propagate = False


class FleetUtil:
    def __init__(self, mode="transpiler"):
        if mode not in ("transpiler", "pslib"):
            raise ValueError("FleetUtil mode must be 'transpiler' or 'pslib', got %r" % (mode,))
        if mode == "pslib":
            raise NotImplementedError("FleetUtil(mode='pslib') needs Baidu's pslib, which paddle_compat does not "
                                      "provide; use mode='transpiler'")
        self._fleet = fleet

    def _is_rank0(self):
        return self._fleet.worker_index() == 0

    def rank0_print(self, s):
        if self._is_rank0():
            print(s, flush=True)

    def rank0_info(self, s):
        if self._is_rank0():
            _logger.info(s)

    def rank0_error(self, s):
        if self._is_rank0():
            _logger.error(s)

    def split_files(self, files):
        return self._fleet.split_files(files)

    def get_global_auc(self, scope=None, stat_pos="_generated_var_2", stat_neg="_generated_var_3"):
        """AUC from the positive/negative bucket statistics of fluid.layers.auc (summed over trainers by
        the caller's program, as with Paddle's transpiler mode)."""
        scope = scope or global_scope()
        pos = scope.find_var(stat_pos)
        neg = scope.find_var(stat_neg)
        if pos is None or neg is None:
            self.rank0_print("not found auc bucket")
            return None
        pos = np.array(pos.get_tensor()).reshape(-1)
        neg = np.array(neg.get_tensor()).reshape(-1)
        area, tp, fp = 0.0, 0.0, 0.0
        for i in reversed(range(len(pos))):
            new_tp, new_fp = tp + pos[i], fp + neg[i]
            area += (new_fp - fp) * (tp + new_tp) / 2.0
            tp, fp = new_tp, new_fp
        if tp == 0 or fp == 0:
            return 0.5
        return float(area / (tp * fp))
