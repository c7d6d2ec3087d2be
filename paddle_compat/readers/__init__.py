"""Paddle 1.x's `paddle.reader` (`import paddle` maps it here). Not named `reader`: `paddle_compat.reader` is
fluid.reader."""

from . import decorator  # noqa: F401
from .decorator import (ComposeNotAligned, batch, buffered, cache, chain, compose, firstn, map_readers,  # noqa: F401
                        multiprocess_reader, shuffle, xmap_readers)

__all__ = ["map_readers", "buffered", "compose", "chain", "shuffle", "ComposeNotAligned", "firstn",
           "xmap_readers", "cache", "multiprocess_reader"]
