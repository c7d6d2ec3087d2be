"""Automatic mixed precision (Paddle 1.8's fluid.contrib.mixed_precision): `decorate(optimizer)`."""

from . import decorator, fp16_lists, fp16_utils  # noqa: F401
from .decorator import decorate  # noqa: F401
from .fp16_lists import AutoMixedPrecisionLists  # noqa: F401

__all__ = ["decorate", "AutoMixedPrecisionLists"]
