"""The one registry of op lowerings: op type -> kernel factory.

A kernel factory receives (op, ctx) once, when a block is lowered, and returns a plain Python callable that
the generated code calls directly on every run. Slot specs say how arguments are passed:
  inputs:  "X" one tensor (None if the slot is absent), "X*" a list of tensors (duplicable slot)
  outputs: "Out" one tensor, "Out*" a list of tensors
LoD-aware kernels list the input slots whose LoD they read (`lod_in`, passed after the tensors) and the
output slots whose LoD they compute (`lod_out`, returned after the tensors); "X*" there means one LoD per
variable of a duplicable slot. A LoD is a tuple of int64 offset tensors, one per level, on the data's
device (None when the variable has none). Outputs not listed share the LoD of the first LoD input
(Paddle's ShareLoD), when the output variable has lod_level > 0.
"""

__all__ = ["register", "get", "known_op_types", "KernelSpec"]


class KernelSpec:
    __slots__ = ("type", "inputs", "outputs", "factory", "lod_in", "lod_out")

    def __init__(self, type, inputs, outputs, factory, lod_in=(), lod_out=()):
        self.type = type
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.factory = factory
        self.lod_in = tuple(lod_in)
        self.lod_out = tuple(lod_out)


_KERNELS = {}


def register(op_types, inputs=("X",), outputs=("Out",), lod_in=(), lod_out=()):
    if isinstance(op_types, str):
        op_types = [op_types]

    def deco(factory):
        for t in op_types:
            if t in _KERNELS:
                raise ValueError("op %s is registered twice" % t)
            _KERNELS[t] = KernelSpec(t, inputs, outputs, factory, lod_in, lod_out)
        return factory

    return deco


def get(op_type):
    _load()
    spec = _KERNELS.get(op_type)
    if spec is None:
        raise NotImplementedError("op type '%s' has no lowering to torch (known: %d op types; see "
                                  "paddle_compat/backends/lowering/)" % (op_type, len(_KERNELS)))
    return spec


def known_op_types():
    _load()
    return set(_KERNELS)


_loaded = False


def _load():
    global _loaded
    if not _loaded:
        _loaded = True
        from . import kernels  # noqa: F401  (imports every op family module)
