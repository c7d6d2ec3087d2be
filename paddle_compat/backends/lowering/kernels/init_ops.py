"""Tensor-creating ops: fill_constant, uniform/gaussian random, assign_value, *_like fills, increment."""

import numpy as np
import torch

from ..registry import register
from .common import attr, generator_for, torch_dtype


def _device(op, ctx):
    return "cpu" if attr(op, "force_cpu", False) else ctx.device


@register("fill_constant", inputs=("ShapeTensor", "ShapeTensorList*"))
def fill_constant(op, ctx):
    shape = [int(d) for d in attr(op, "shape")]
    dtype, value, device = torch_dtype(attr(op, "dtype", 5)), float(attr(op, "value", 0.0)), _device(op, ctx)

    def k(shape_tensor=None, shape_list=()):
        # run-time dims (ShapeTensor, else ShapeTensorList) take precedence over the attr, as in Paddle
        if shape_tensor is not None:
            dims = [int(d) for d in shape_tensor.reshape(-1).tolist()]
        elif shape_list:
            dims = [int(t.reshape(-1)[0]) for t in shape_list]
        else:
            dims = shape
        if any(d < 0 for d in dims):
            raise ValueError("fill_constant: shape %s has a negative dim (output '%s')"
                             % (dims, op.outputs["Out"][0]))
        return torch.full(dims, value, dtype=dtype, device=device)
    return k


@register("fill_constant_batch_size_like", inputs=("Input",))
def fill_constant_bsl(op, ctx):
    shape = list(attr(op, "shape"))
    dtype, value = torch_dtype(attr(op, "dtype", 5)), float(attr(op, "value", 0.0))
    idim, odim = attr(op, "input_dim_idx", 0), attr(op, "output_dim_idx", 0)

    def k(x):
        s = list(shape)
        s[odim] = x.shape[idim]
        return torch.full(s, value, dtype=dtype, device=x.device)
    return k


@register("uniform_random", inputs=())
def uniform_random(op, ctx):
    shape, dtype = [int(d) for d in attr(op, "shape")], torch_dtype(attr(op, "dtype", 5))
    lo, hi, seed, device = float(attr(op, "min", -1.0)), float(attr(op, "max", 1.0)), attr(op, "seed", 0), ctx.device

    def k():
        out = torch.empty(shape, dtype=dtype, device=device)
        return out.uniform_(lo, hi, generator=generator_for(seed, device))
    return k


@register("gaussian_random", inputs=())
def gaussian_random(op, ctx):
    shape, dtype = [int(d) for d in attr(op, "shape")], torch_dtype(attr(op, "dtype", 5))
    mean, std, seed, device = float(attr(op, "mean", 0.0)), float(attr(op, "std", 1.0)), attr(op, "seed", 0), ctx.device

    def k():
        out = torch.empty(shape, dtype=dtype, device=device)
        return out.normal_(mean, std, generator=generator_for(seed, device))
    return k


@register("truncated_gaussian_random", inputs=())
def truncated_gaussian_random(op, ctx):
    shape, dtype = [int(d) for d in attr(op, "shape")], torch_dtype(attr(op, "dtype", 5))
    mean, std, seed, device = float(attr(op, "mean", 0.0)), float(attr(op, "std", 1.0)), attr(op, "seed", 0), ctx.device

    def k():
        out = torch.empty(shape, dtype=torch.float32, device=device)
        torch.nn.init.trunc_normal_(out, mean, std, mean - 2 * std, mean + 2 * std,
                                    generator=generator_for(seed, device))
        return out.to(dtype)
    return k


@register("assign_value", inputs=())
def assign_value(op, ctx):
    shape = [int(d) for d in attr(op, "shape")]
    dtype = torch_dtype(attr(op, "dtype", 5))
    for key in ("fp32_values", "int32_values", "int64_values", "bool_values"):
        vals = op.attrs.get(key)
        if vals is not None and len(vals):
            break
    arr = np.ascontiguousarray(np.asarray(vals).reshape(shape))
    device = ctx.device

    def k():   # built from the attribute on each run: the cached program holds no second copy
        t = torch.from_numpy(arr).to(dtype=dtype, device=device)
        return t.clone() if t.data_ptr() == arr.ctypes.data else t
    return k


@register("assign")
def assign(op, ctx):
    return lambda x: x.clone() if not x.is_sparse else x


@register("fill_zeros_like")
def fill_zeros_like(op, ctx):
    return torch.zeros_like


@register("fill_any_like")
def fill_any_like(op, ctx):
    v = float(attr(op, "value", 0.0))
    return lambda x: torch.full_like(x, v)


@register("increment")
def increment(op, ctx):
    step = attr(op, "step", 1.0)
    inplace = op.input("X") == op.output("Out")

    def k(x):
        if inplace:
            return x.add_(int(step) if not x.is_floating_point() else step)
        return x + (int(step) if not x.is_floating_point() else step)
    return k


@register("range", inputs=("Start", "End", "Step"))
def range_(op, ctx):
    return lambda s, e, st: torch.arange(s.item(), e.item(), st.item(), dtype=s.dtype, device=s.device)
