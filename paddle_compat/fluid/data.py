"""fluid.data (Paddle 1.6+'s fluid/data.py): a feed variable whose shape is taken as given."""

from .layers.io import data as _layers_data

__all__ = ["data"]


def data(name, shape, dtype="float32", lod_level=0):
    """fluid.data (1.6+): like layers.data but the shape is taken as given (no batch dim added, None = -1),
    and the executor checks each feed's shape against it (Paddle checks fluid.data's feeds only)."""
    var = _layers_data(name=name, shape=[-1 if d is None else d for d in shape], dtype=dtype,
                       lod_level=lod_level, append_batch_size=False)
    var.need_check_feed = True
    return var
