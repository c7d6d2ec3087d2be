"""Paddle's fluid.executor: Executor (executor.py: lower a program's block once, run it) and
train_from_dataset / infer_from_dataset (dataset_run.py)."""

from ...ir import global_scope, scope_guard  # noqa: F401
from .dataset_run import FetchHandler  # noqa: F401
from .executor import Executor, _as_lodtensor, _fetch_var, as_numpy  # noqa: F401

__all__ = ["Executor", "global_scope", "scope_guard", "as_numpy"]
