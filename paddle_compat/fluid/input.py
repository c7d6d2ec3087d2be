"""fluid.one_hot and fluid.embedding (Paddle 1.8's fluid/input.py): unlike their fluid.layers namesakes, the ids
need no trailing dimension of 1."""

from ..ir import Variable
from .layers.nn.common import _embedding
from .layers.utils import append_defined, check_variable

__all__ = ["one_hot", "embedding"]


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


def embedding(input, size, is_sparse=False, is_distributed=False, padding_idx=None, param_attr=None,
              dtype="float32"):
    """fluid.embedding (1.6+): a `lookup_table_v2` op; the output is the ids' shape + [emb_dim] (the ids
    need no trailing dim of 1, unlike fluid.layers.embedding)."""
    return _embedding("lookup_table_v2", input, size, is_sparse, is_distributed, padding_idx, param_attr, dtype)
