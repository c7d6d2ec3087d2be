"""fluid's dygraph switches (fluid.enable_dygraph, ...) and dygraph-only variable types (fluid.core.VarBase,
fluid.framework.ComplexVariable): static mode is the only mode here, and each says plainly what happens."""

from . import DygraphUnsupportedError

__all__ = ["enable_dygraph", "disable_dygraph", "enable_imperative", "disable_imperative", "VarBase",
           "ComplexVariable"]


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
