"""fluid.dygraph.base: guard / to_variable (the eager single-op path, fluid/eager_op.py); every other name
raises DygraphUnsupportedError on use (see fluid.dygraph)."""

from . import _lookup
from ..eager_op import guard, to_variable  # noqa: F401


def __getattr__(name):
    return _lookup(name)
