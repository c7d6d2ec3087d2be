"""fluid.one_hot (Paddle 1.8's fluid/input.py; fluid.embedding lives in fluid/__init__.py)."""

from ..ir import Variable
from .layers.helpers import append_defined, check_variable

__all__ = ["one_hot"]


def one_hot(input, depth, allow_out_of_range=False):
    """One-hot rows for integer ids of any shape: [..] -> [.., depth], float32 (depth an int or a Variable).
    Unlike layers.one_hot no trailing dimension of 1 is needed or removed."""
    check_variable(input, "input", "one_hot")
    inputs = {"X": input}
    attrs = {"allow_out_of_range": bool(allow_out_of_range)}
    if isinstance(depth, Variable):
        depth.stop_gradient = True
        inputs["depth_tensor"] = depth
    else:
        attrs["depth"] = int(depth)
    outs = append_defined("one_hot_v2", inputs, attrs, stop_gradient=True)
    return outs["Out"][0]
