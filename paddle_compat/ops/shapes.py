"""Small infer_shape builders shared by op definitions (pure Python, no torch)."""

from .registry import OutMeta

__all__ = ["same_as", "first", "reduce_dims"]


def first(ins, slot):
    vs = ins.get(slot) or []
    return vs[0] if vs else None


def same_as(slot="X", out="Out", dtype=None, keep_lod=True):
    """The output has the shape (and LoD level) of input `slot`."""
    def infer(ins, attrs):
        x = first(ins, slot)
        return {out: OutMeta(x.shape, dtype or x.dtype, x.lod_level if keep_lod else 0)}
    return infer


def reduce_dims(shape, dims, keep_dim):
    """Shape after reducing `dims` (None: all)."""
    n = len(shape)
    if dims is None:
        return [1] * n if keep_dim else [1]
    dims = {d % n for d in dims}
    out = [1 if i in dims else s for i, s in enumerate(shape) if keep_dim or i not in dims]
    return out or [1]
