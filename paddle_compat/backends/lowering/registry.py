"""Kernel lookup for the lowering. The op table itself is paddle_compat/ops (shapes, kernels and grad facts
of every op type, below both the front end and the backends); this module loads the torch-backed kernel
families of the older form and answers `get(op_type)` with the op's definition.
"""

from ...ops import registry as _ops

__all__ = ["register", "get", "known_op_types"]

# The older, kernel-only form used by the families in kernels/ (see ops.registry.register_kernel).
register = _ops.register_kernel


def get(op_type):
    _load()
    d = _ops.find(op_type)
    if d is None or d.factory is None:
        raise NotImplementedError("op type '%s' has no lowering to torch (known: %d op types; see "
                                  "paddle_compat/ops/ and paddle_compat/backends/lowering/kernels/)"
                                  % (op_type, len(_ops.known_op_types())))
    return d


def known_op_types():
    _load()
    return _ops.known_op_types()


_loaded = False


def _load():
    global _loaded
    if not _loaded:
        _loaded = True
        # kept in a function: the torch-backed kernel families load with the first lowering, not with the package
        from . import kernels  # noqa: F401
