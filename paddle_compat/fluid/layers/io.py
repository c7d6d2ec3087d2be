"""Data layers: declare what a run feeds."""

from ..dtypes import VarType
from ..layer_helper import LayerHelper

__all__ = ["data"]


def data(name, shape, append_batch_size=True, dtype="float32", lod_level=0, type=VarType.LOD_TENSOR,
         stop_gradient=True):
    """A fed variable. Paddle's batch rule: unless a dim is None or negative, -1 is prepended."""
    if not isinstance(name, str):
        raise TypeError("data: name must be a str, got %r" % (name,))
    if not isinstance(shape, (list, tuple)):
        raise TypeError("data(%s): shape must be a list or tuple, got %r" % (name, shape))
    helper = LayerHelper("data", name=name)
    shape = list(shape)
    for i, d in enumerate(shape):
        if d is None:
            shape[i] = -1
            append_batch_size = False
        elif d < 0:
            append_batch_size = False
    if append_batch_size:
        shape = [-1] + shape
    return helper.create_global_variable(name=name, shape=shape, dtype=dtype, type=type,
                                         stop_gradient=stop_gradient, lod_level=lod_level, is_data=True,
                                         need_check_feed=True)
