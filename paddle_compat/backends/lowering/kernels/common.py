"""Helpers shared by the kernel families."""

import torch

from ....fluid.dtypes import convert_dtype, dtype_name

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


def generator_for(seed, device):
    """A seeded generator when the op has a fixed seed (re-running gives the same numbers, as in Paddle)."""
    if not seed:
        return None
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    return gen


def out_shape(op, ctx, slot="Out"):
    """Static shape of an op's output variable, from the program."""
    v = ctx.var(op.output(slot)[0])
    return list(v.shape) if v is not None else None


# Paddle 1.8's CPU softmax (also inside softmax_with_cross_entropy) clips x - max(x) at -64 before exp, so
# a far-off logit gets probability ~e^-64 (1.6e-28) rather than 0, and -log of it is at most ~64, never inf.
SOFTMAX_CLIP = -64.0


def softmax_shift(x, axis):
    """x - max(x) clipped at -64 along `axis`. The clip passes gradient straight through: Paddle's grad
    kernels compute from the (clipped) softmax output, as if the clip were not there."""
    y = x - x.detach().amax(axis, keepdim=True)
    # y - y.detach() is an exact zero carrying y's gradient; y + (clip - y).detach() would round to 0 for
    # y ~ -1e20 (sample_logits marks accidental hits with -1e20)
    return torch.where(y < SOFTMAX_CLIP, (y - y.detach()) + SOFTMAX_CLIP, y)
