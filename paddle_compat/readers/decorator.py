"""`paddle.reader.decorator`: Paddle 1.x's sample-reader decorators. They are defined once, in
fluid.reader_decorator (batch, shuffle, compose, ...) and fluid.reader_parallel (xmap_readers,
multiprocess_reader); this is the import path scripts use."""

from ..fluid.reader_decorator import *  # noqa: F401,F403
from ..fluid.reader_decorator import ComposeNotAligned  # noqa: F401
from ..fluid.reader_parallel import multiprocess_reader, xmap_readers  # noqa: F401
