"""Paddle 1.8's argument checks of its layer builders (data_feeder.check_variable_and_dtype / check_dtype):
a TypeError naming the argument, the API and what it accepts, in Paddle's words."""

from ...ir import Variable, convert_dtype, dtype_name

__all__ = ["check_variable_and_dtype", "check_dtype"]


def check_dtype(dtype, arg, allowed, api):
    name = dtype_name(convert_dtype(dtype))
    if name not in allowed:
        raise TypeError("The data type of '%s' in %s must be %s, but received %s. " % (arg, api, list(allowed), name))


def check_variable_and_dtype(x, arg, allowed, api):
    if not isinstance(x, Variable):
        raise TypeError("The type of '%s' in %s must be %s, but received %s. " % (arg, api, Variable, type(x)))
    check_dtype(x.dtype, arg, allowed, api)
