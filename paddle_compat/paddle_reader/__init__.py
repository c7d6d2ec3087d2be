"""`paddle.reader` (`import paddle` maps it here): Paddle 1.x's sample-reader decorators (batch, shuffle, compose, ...)."""

from . import decorator  # noqa: F401
from .decorator import *  # noqa: F401,F403
from .decorator import __all__  # noqa: F401
