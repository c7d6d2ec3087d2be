"""torch for op definition modules, imported on first use.

Op modules hold shapes, kernels and grad facts together, and the front end imports them for shapes: a
module-level `import torch` there would make every layer builder load torch. Kernel code writes
`torch.cumsum(...)` as usual; the import happens the first time a kernel factory runs.
"""

import importlib

from .dtypes import convert_dtype, dtype_name

__all__ = ["torch", "F", "torch_dtype"]


class _LazyModule:
    def __init__(self, name):
        self.__dict__["_name"] = name
        self.__dict__["_mod"] = None

    def _load(self):
        mod = self.__dict__["_mod"]
        if mod is None:
            mod = self.__dict__["_mod"] = importlib.import_module(self.__dict__["_name"])
        return mod

    def __getattr__(self, item):
        # kept on the proxy: the next `torch.X` is a plain attribute read, not a call of this method (kernels
        # run these lookups every step)
        value = self.__dict__[item] = getattr(self._load(), item)
        return value

    def __repr__(self):
        return "<lazy module %s>" % self.__dict__["_name"]


torch = _LazyModule("torch")
F = _LazyModule("torch.nn.functional")


def torch_dtype(dtype):
    """VarType member / code / 'float32' -> torch dtype."""
    return getattr(torch, dtype_name(convert_dtype(dtype)))
