"""Helpers shared by the kernel families."""

import torch

from ....ir import convert_dtype, dtype_name

_TORCH = {
    "bool": torch.bool, "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "float16": torch.float16, "float32": torch.float32, "float64": torch.float64,
    "bfloat16": torch.bfloat16,
}


def torch_dtype(dtype):
    """VarType member / code / 'float32' -> torch dtype."""
    return _TORCH[dtype_name(convert_dtype(dtype))]


def attr(op, name, default=None):
    return op.attrs.get(name, default)


def out_shape(op, ctx, slot="Out"):
    """Static shape of an op's output variable, from the program."""
    v = ctx.var(op.output(slot)[0])
    return list(v.shape) if v is not None else None
