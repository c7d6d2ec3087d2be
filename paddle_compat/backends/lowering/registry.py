"""Kernel lookup for the lowering. The op table itself is paddle_compat/ops (one declaration per op type,
below both the front end and the backends); this module loads the backend's own kernels (kernels/, each
registered against a declared type) and answers `get(op_type)` with the op's definition.
"""

from ...ops import registry as _ops

__all__ = ["get", "known_op_types"]


def get(op_type):
    _load()
    d = _ops.find(op_type)
    if d is None or d.factory is None:
        raise NotImplementedError("op type '%s' has no lowering to torch (known: %d op types; see "
                                  "paddle_compat/ops/ and paddle_compat/backends/lowering/kernels/)"
                                  % (op_type, len(_ops.known_op_types())))
    return d


def known_op_types():
    """The op types that have a kernel (feed and fetch, the executor's own, have none)."""
    _load()
    return {t for t in _ops.known_op_types() if _ops.find(t).factory is not None}


_loaded = False


def _load():
    global _loaded
    if not _loaded:
        _loaded = True
        # kept in a function: the torch-backed kernel families load with the first lowering, not with the package
        from . import kernels  # noqa: F401
