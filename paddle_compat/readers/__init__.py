"""Paddle 1.x's `paddle.reader` (`import paddle` maps it here). Not named `reader`: `paddle_compat.reader` is
fluid.reader."""

from . import decorator  # noqa: F401
from ..fluid.reader_decorator import batch, buffered, cache, chain, compose, firstn, map_readers, shuffle  # noqa: F401
from .decorator import ComposeNotAligned, multiprocess_reader, xmap_readers  # noqa: F401

__all__ = ["map_readers", "buffered", "compose", "chain", "shuffle", "ComposeNotAligned", "firstn",
           "xmap_readers", "cache", "multiprocess_reader"]
