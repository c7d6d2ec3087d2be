"""Paddle 1.8's argument checks of its layer builders (data_feeder.check_variable_and_dtype / check_dtype):
a TypeError naming the argument, the API and what it accepts, in Paddle's words."""

import numpy as np

from ...ir import Variable, convert_dtype, dtype_name

__all__ = ["check_variable_and_dtype", "check_dtype", "check_type", "check_shape_items"]


def check_dtype(dtype, arg, allowed, api):
    name = dtype_name(convert_dtype(dtype))
    if name not in allowed:
        raise TypeError("The data type of '%s' in %s must be %s, but received %s. " % (arg, api, list(allowed), name))


def check_variable_and_dtype(x, arg, allowed, api):
    if not isinstance(x, Variable):
        raise TypeError("The type of '%s' in %s must be %s, but received %s. " % (arg, api, Variable, type(x)))
    check_dtype(x.dtype, arg, allowed, api)


def check_type(value, arg, allowed, api):
    if not isinstance(value, allowed):
        raise TypeError("The type of '%s' in %s must be %s, but received %s. " % (arg, api, allowed, type(value)))


_SHAPE_ITEM = (int, np.uint8, np.int8, np.int16, np.int32, np.int64)


def check_shape_items(shape, api):
    """A build-time shape given as a list: Paddle 1.8 refuses floats (and bools pass, being ints)."""
    check_type(shape, "shape", (list, tuple, np.ndarray), api)
    for item in shape:
        check_type(item, "item of shape", _SHAPE_ITEM, api)
