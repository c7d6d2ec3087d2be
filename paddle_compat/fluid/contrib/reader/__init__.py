from . import distributed_reader  # noqa: F401
from .distributed_reader import distributed_batch_reader  # noqa: F401

__all__ = ["distributed_batch_reader"]
