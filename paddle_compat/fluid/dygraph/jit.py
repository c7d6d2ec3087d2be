"""fluid.dygraph.jit: every name raises DygraphUnsupportedError on use (see fluid.dygraph)."""

from . import _lookup


def __getattr__(name):
    return _lookup(name)
