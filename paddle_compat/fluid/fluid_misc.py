"""Top-level fluid names of Paddle 1.8 that have nothing to compute here: the dygraph switches, dygraph-only
variable types, and custom-operator loading. Each says plainly what happens instead."""

from .dygraph import DygraphUnsupportedError

__all__ = ["enable_dygraph", "disable_dygraph", "enable_imperative", "disable_imperative", "VarBase",
           "ComplexVariable", "load_op_library"]


def _no_dygraph(what):
    raise DygraphUnsupportedError(
        "fluid.%s: dygraph (eager) mode is not supported by paddle_compat; it runs Fluid's static graph mode "
        "only (Program + Executor)" % what)


def enable_dygraph(place=None):
    _no_dygraph("enable_dygraph")


def enable_imperative(place=None):
    _no_dygraph("enable_imperative")


# Static mode is the only mode, so asking for it is honoured (scripts call these to make sure of it).
def disable_dygraph():
    return None


def disable_imperative():
    return None


class VarBase(object):
    """Dygraph's tensor type: isinstance checks answer False; making one raises DygraphUnsupportedError."""
    def __init__(self, *args, **kwargs):
        _no_dygraph("VarBase")


class ComplexVariable(object):
    """Dygraph's complex tensor type: isinstance checks answer False; making one raises."""
    def __init__(self, *args, **kwargs):
        _no_dygraph("ComplexVariable")


def load_op_library(lib_filename):
    raise NotImplementedError(
        "load_op_library(%r): custom C++ operators compiled against Paddle cannot be loaded by paddle_compat; "
        "write the op as a Python kernel with paddle_compat.ops.defop (see paddle_compat/ops/registry.py), or "
        "use layers.py_func" % (lib_filename,))
