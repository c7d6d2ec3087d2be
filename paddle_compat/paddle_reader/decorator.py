"""`paddle.reader.decorator`: the decorators live in fluid.reader_decorator; this is Paddle's import path."""

from ..fluid.reader_decorator import *  # noqa: F401,F403
from ..fluid.reader_decorator import __all__  # noqa: F401
