"""layers.py_func: a Python function as an op of the program (forward and optional backward)."""

from ....ir import Variable
from ....ops.defs.py_func_op import register_callable
from ...layer_helper import LayerHelper
from ..io import _with_lod_tensors

__all__ = ["py_func"]


def _as_list(v, what):
    if v is None:
        return []
    if isinstance(v, Variable):
        return [v]
    if isinstance(v, (list, tuple)):
        return list(v)
    raise TypeError("py_func: %s must be a Variable or a list/tuple of Variables, got %r" % (what, type(v).__name__))


def py_func(func, x, out, backward_func=None, skip_vars_in_backward_input=None):
    """Runs `func` (Python) as an op; `out` variables must be created by the caller with their shapes."""
    helper = LayerHelper("py_func")
    xs, outs = _as_list(x, "x"), _as_list(out, "out")
    for o in outs:
        if len(o.shape) == 0:
            raise ValueError("py_func: give the shape of output %s when creating it" % o.name)
    skip = set()
    if backward_func is not None and skip_vars_in_backward_input is not None:
        known = {v.name for v in xs + outs}
        for v in _as_list(skip_vars_in_backward_input, "skip_vars_in_backward_input"):
            if v.name not in known:
                raise ValueError("py_func: skip variable %s is not a forward input or output" % v.name)
            skip.add(v.name)
    helper.append_op(type="py_func", inputs={"X": xs}, outputs={"Out": outs},
                     attrs={"forward_callable_id": register_callable(_with_lod_tensors(func)),
                            "backward_callable_id": (register_callable(_with_lod_tensors(backward_func))
                                                     if backward_func else -1),
                            "backward_skip_vars": sorted(skip)})
    return out
