"""Kernel lookup for the lowering. The op table itself is paddle_compat/ops (one declaration per op type,
below both the front end and the backends); this module loads the backend's own kernels (kernels/, each
registered against a declared type) and answers `get(op_type)` with the op's definition.

A runtime above the lowering (the pserver runtime, backends/ps) registers its kernels itself: it tells this
registry how to load them (`provide`), and an op declared with that runtime loads them on first lookup. The
lowering so never imports a runtime, and a runtime's dependencies load only for programs that need them.
"""

from ...ops import registry as _ops

__all__ = ["get", "known_op_types", "provide"]

_providers = {}


def provide(runtime, load):
    """load() registers the kernels of the ops declared with runtime=`runtime` (ops/registry.py)."""
    _providers[runtime] = load


def get(op_type):
    _load()
    d = _ops.find(op_type)
    if d is not None and d.factory is None and d.runtime is not None:
        if d.runtime not in _providers:
            raise NotImplementedError("op type '%s' runs on the '%s' runtime, which is not loaded (it registers "
                                      "itself when imported: paddle_compat.backends.%s)"
                                      % (op_type, d.runtime, d.runtime))
        _providers[d.runtime]()
    if d is None or d.factory is None:
        raise NotImplementedError("op type '%s' has no lowering to torch (known: %d op types; see "
                                  "paddle_compat/ops/ and paddle_compat/backends/lowering/kernels/)"
                                  % (op_type, len(_ops.known_op_types())))
    return d


def known_op_types():
    """The op types that have a kernel, or whose runtime registers one when needed (feed and fetch, the
    executor's own, have none)."""
    _load()
    return {t for t in _ops.known_op_types()
            if _ops.find(t).factory is not None or _ops.find(t).runtime in _providers}


_loaded = False


def _load():
    global _loaded
    if not _loaded:
        _loaded = True
        # kept in a function: the torch-backed kernel families load with the first lowering, not with the package
        from . import kernels  # noqa: F401
