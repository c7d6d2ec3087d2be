"""fluid.dygraph: importable so static-graph scripts that import it load; eager mode is not supported.

Every name resolves (classes can even be subclassed at import time), and using one raises
DygraphUnsupportedError, which says so. `enabled()` answers False, which is true here.
"""

__all__ = ["DygraphUnsupportedError", "enabled"]


class DygraphUnsupportedError(NotImplementedError):
    pass


def _fail(name):
    raise DygraphUnsupportedError(
        "fluid.dygraph.%s: dygraph (eager) mode is not supported by paddle_compat; it runs Fluid's static "
        "graph mode only (Program + Executor)" % name)


def enabled():
    return False


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
