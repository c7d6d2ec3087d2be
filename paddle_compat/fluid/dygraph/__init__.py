"""fluid.dygraph: importable so static-graph scripts that import it load.

`guard`, `to_variable` and `enabled` give the minimal eager mode of fluid/eager_op.py (single ops appended to a
block run at once, VarBase results, backward by replay: what Paddle's op tests use). Every other name
resolves (classes can even be subclassed at import time), and using one raises DygraphUnsupportedError.
"""

from ..eager_op import VarBase, guard, to_variable  # noqa: F401  (the eager single-op path)
from .. import eager_op as _eager

__all__ = ["DygraphUnsupportedError", "enabled", "guard", "to_variable", "VarBase"]


class DygraphUnsupportedError(NotImplementedError):
    pass


def _fail(name):
    raise DygraphUnsupportedError(
        "fluid.dygraph.%s: dygraph (eager) mode is not supported by paddle_compat; it runs Fluid's static "
        "graph mode only (Program + Executor)" % name)


def enabled():
    return bool(_eager._STATE.frames)


def _unsupported(name):
    if name[:1].isupper():          # a class: scripts subclass Layer etc. at import time
        def __init__(self, *args, **kwargs):
            _fail(name)
        return type(name, (object,), {"__init__": __init__, "__module__": __name__})

    def fn(*args, **kwargs):
        _fail(name)
    fn.__name__ = name
    return fn


_cache = {}


def _lookup(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name not in _cache:
        _cache[name] = _unsupported(name)
    return _cache[name]


def __getattr__(name):
    return _lookup(name)


# fluid.dygraph.base.guard without importing the submodule first, as in Paddle ("from . import base" would
# ask __getattr__ above)
from .base import guard as _guard  # noqa: E402,F401
