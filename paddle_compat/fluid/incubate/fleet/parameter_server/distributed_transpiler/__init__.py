"""Paddle shipped this spelling too: `...parameter_server.distributed_transpiler` is the same Fleet."""

from ..distribute_transpiler import (DistributedTranspiler, StrategyFactory, TranspilerOptimizer,  # noqa: F401
                                     fleet)
from ..distribute_transpiler import distributed_strategy  # noqa: F401

__all__ = ["fleet", "DistributedTranspiler", "TranspilerOptimizer", "StrategyFactory"]
