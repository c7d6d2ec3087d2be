"""Tensor-creating ops: fill_constant, uniform/gaussian random, assign_value, *_like fills, increment,
fake_init, and the other random sources of Paddle 1.8 (randint, randperm, seed, sampling_id,
uniform/gaussian_random_batch_size_like).

Their builders (fluid/layers/tensor.py) keep their own outputs (an `out=` argument may name an existing
variable); the shapes below are what those outputs get.
"""

import numpy as np

from ...ir.lazy import torch, torch_dtype
from ..registry import attr, defop, OutMeta
from ..shapes import first, same_as


def generator_for(seed, device):
    """A seeded generator when the op has a fixed seed (re-running gives the same numbers, as in Paddle)."""
    if not seed:
        return None
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    return gen


def _attr_shape(ins, attrs):
    return {"Out": OutMeta([int(d) for d in attrs["shape"]], attrs.get("dtype", 5))}


def _bsl_shape(ins, attrs):
    x, shape = first(ins, "Input"), list(attrs["shape"])
    shape[attrs.get("output_dim_idx", 0)] = x.shape[attrs.get("input_dim_idx", 0)]
    return {"Out": OutMeta(shape, attrs.get("dtype", 5))}


def _device(op, ctx):
    # force_cpu is accepted and not honoured: Paddle moved a CPU tensor to the next op's device itself (data
    # transform); our kernels do not, so every tensor of a run stays on the executor's device (on a GPU, a
    # CPU-forced LR counter met the CUDA LR constants in elementwise_pow).
    return ctx.device


@defop("fill_constant", inputs=("ShapeTensor", "ShapeTensorList*"), infer_shape=_attr_shape, differentiable=False)
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


@defop("fake_init", inputs=(), infer_shape=_attr_shape, differentiable=False, operator_base=True)
def fake_init(op, ctx):
    """Pserver mode's placeholder for a trainer's copy of a sparse table (the transpiler puts it where the
    table's init was): the var gets its shape and dtype but no values. Paddle only resized the tensor; here
    it is a stride-0 view of one zero, so a table the trainer never holds costs no memory (its rows come by
    prefetch, or the startup's recv replaces the var with the pservers' values)."""
    name = op.outputs["Out"][0]
    v = ctx.var(name)
    if v is None:
        raise ValueError("fake_init: output variable '%s' is not declared" % name)
    shape, dtype, device = [int(d) for d in attr(op, "shape")], torch_dtype(v.dtype), ctx.device
    if any(d < 0 for d in shape):
        raise ValueError("fake_init: shape %s of '%s' has a negative dim" % (shape, name))
    def k():
        t = torch.zeros((), dtype=dtype, device=device).expand(shape)
        t._fake_init = True
        return t
    return k


def is_fake_init(value):
    """Whether a var's value is fake_init's placeholder (a table whose values live on the pservers)."""
    return bool(getattr(value, "_fake_init", False))


@defop("fill_constant_batch_size_like", inputs=("Input",), infer_shape=_bsl_shape, differentiable=False)
def fill_constant_bsl(op, ctx):
    shape = list(attr(op, "shape"))
    dtype, value = torch_dtype(attr(op, "dtype", 5)), float(attr(op, "value", 0.0))
    idim, odim = attr(op, "input_dim_idx", 0), attr(op, "output_dim_idx", 0)

    def k(x):
        s = list(shape)
        s[odim] = x.shape[idim]
        return torch.full(s, value, dtype=dtype, device=x.device)
    return k


@defop("uniform_random", inputs=(), infer_shape=_attr_shape, differentiable=False, random_init=True, random=True)
def uniform_random(op, ctx):
    shape, dtype = [int(d) for d in attr(op, "shape")], torch_dtype(attr(op, "dtype", 5))
    lo, hi, seed, device = float(attr(op, "min", -1.0)), float(attr(op, "max", 1.0)), attr(op, "seed", 0), ctx.device

    def k():
        out = torch.empty(shape, dtype=dtype, device=device)
        return out.uniform_(lo, hi, generator=generator_for(seed, device))
    return k


@defop("gaussian_random", inputs=(), infer_shape=_attr_shape, differentiable=False, random_init=True, random=True)
def gaussian_random(op, ctx):
    shape, dtype = [int(d) for d in attr(op, "shape")], torch_dtype(attr(op, "dtype", 5))
    mean, std, seed, device = float(attr(op, "mean", 0.0)), float(attr(op, "std", 1.0)), attr(op, "seed", 0), ctx.device

    def k():
        out = torch.empty(shape, dtype=dtype, device=device)
        return out.normal_(mean, std, generator=generator_for(seed, device))
    return k


@defop("truncated_gaussian_random", inputs=(), infer_shape=_attr_shape, differentiable=False, random_init=True,
       random=True)
def truncated_gaussian_random(op, ctx):
    shape, dtype = [int(d) for d in attr(op, "shape")], torch_dtype(attr(op, "dtype", 5))
    mean, std, seed, device = float(attr(op, "mean", 0.0)), float(attr(op, "std", 1.0)), attr(op, "seed", 0), ctx.device

    def k():
        out = torch.empty(shape, dtype=torch.float32, device=device)
        torch.nn.init.trunc_normal_(out, mean, std, mean - 2 * std, mean + 2 * std,
                                    generator=generator_for(seed, device))
        return out.to(dtype)
    return k


@defop("assign_value", inputs=(), infer_shape=_attr_shape, differentiable=False)
def assign_value(op, ctx):
    shape = [int(d) for d in attr(op, "shape")]
    dtype = torch_dtype(attr(op, "dtype", 5))
    for key in ("fp32_values", "int32_values", "int64_values", "bool_values"):
        vals = op.attrs.get(key)
        if vals is not None and len(vals):
            break
    arr = np.ascontiguousarray(np.asarray(vals).reshape(shape))
    device = ctx.device
    held = {}

    def made():
        t = torch.from_numpy(arr).to(dtype=dtype, device=device)
        return t.clone() if t.data_ptr() == arr.ctypes.data else t

    def k():   # built from the attribute on each run: the cached program holds no second copy
        if str(device) != "cpu" and arr.size <= _HELD_ON_DEVICE:    # (a small constant, a step's own)
            return device_constant(held, None, made)
        return made()
    return k


_HELD_ON_DEVICE = 1 << 16   # elements


def device_constant(cache, key, make):
    """A copy of the device tensor make() built from host values, made once per key and copied on the device
    after that: an upload in the middle of a step is a host-to-device copy a CUDA graph cannot hold. (At most
    64 keys are kept.)"""
    t = cache.get(key)
    if t is None:
        if len(cache) >= 64:
            cache.clear()
        t = cache[key] = make()
    return t.clone()


@defop("assign", infer_shape=same_as("X"), row_wise=True)
def assign(op, ctx):
    return lambda x: x.clone() if not x.is_sparse else x


@defop("fill_zeros_like", infer_shape=same_as("X", keep_lod=False), differentiable=False)
def fill_zeros_like(op, ctx):
    return torch.zeros_like


@defop("fill_any_like", infer_shape=same_as("X", keep_lod=False), differentiable=False)
def fill_any_like(op, ctx):
    v = float(attr(op, "value", 0.0))
    return lambda x: torch.full_like(x, v)


@defop("increment", infer_shape=same_as("X"), differentiable=False)
def increment(op, ctx):
    step = attr(op, "step", 1.0)
    inplace = op.input("X") == op.output("Out")

    def k(x):
        if inplace and not x.requires_grad:   # a loop variable a backward differentiates: out of place
            return x.add_(int(step) if not x.is_floating_point() else step)
        return x + (int(step) if not x.is_floating_point() else step)
    return k


# the length depends on the values of Start/End/Step: unknown when the program is built
@defop("range", inputs=("Start", "End", "Step"),
       infer_shape=lambda ins, attrs: {"Out": OutMeta((-1,), first(ins, "Start").dtype)}, differentiable=False,
       host="data")
def range_(op, ctx):
    return lambda s, e, st: torch.arange(s.item(), e.item(), st.item(), dtype=s.dtype, device=s.device)


def _gen(seed, device):
    if not seed:
        return None
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


def _random_attr_shape(ins, attrs):
    return {"Out": OutMeta(attrs["shape"], attrs["dtype"])}


@defop("randint", inputs=(), infer_shape=_random_attr_shape, differentiable=False, random=True)
def randint(op, ctx):
    shape, lo, hi = [int(d) for d in attr(op, "shape")], int(attr(op, "low", 0)), int(attr(op, "high"))
    dt, seed = torch_dtype(attr(op, "dtype", "int64")), attr(op, "seed", 0)
    return lambda: torch.randint(lo, hi, shape, dtype=dt, device=ctx.device, generator=_gen(seed, ctx.device))


@defop("randperm", inputs=(), infer_shape=lambda ins, attrs: {"Out": OutMeta((attrs["n"],), attrs["dtype"])},
       differentiable=False, random=True)
def randperm(op, ctx):
    n, dt, seed = int(attr(op, "n")), torch_dtype(attr(op, "dtype", "int64")), attr(op, "seed", 0)
    return lambda: torch.randperm(n, generator=_gen(seed, "cpu")).to(device=ctx.device, dtype=dt)


# The seed a dropout reads from its Seed input: the attribute, or (0) a fresh one each run, drawn from torch's
# generator so that torch.manual_seed makes runs repeatable. Paddle keeps it on the CPU.
@defop("seed", inputs=(), infer_shape=lambda ins, attrs: {"Out": OutMeta((1,), "int32")}, differentiable=False)
def seed(op, ctx):
    fixed = int(attr(op, "seed", 0) or 0)
    if fixed:
        return lambda: torch.tensor([fixed], dtype=torch.int32)
    return lambda: torch.randint(1, 2 ** 31 - 1, (1,), dtype=torch.int32)


# Paddle's kernel writes int64 ids whatever the layer's dtype argument says; the variable is int64 here.
@defop("sampling_id", infer_shape=lambda ins, attrs: {"Out": OutMeta((first(ins, "X").shape[0],), "int64")},
       differentiable=False, random=True)
def sampling_id(op, ctx):
    # Paddle draws r ~ U[min, max) per row and returns the first index whose running sum of X exceeds r.
    lo, hi, seed = float(attr(op, "min", 0.0)), float(attr(op, "max", 1.0)), attr(op, "seed", 0)

    def k(x):
        r = torch.empty(x.shape[0], dtype=x.dtype, device=x.device).uniform_(lo, hi,
                                                                              generator=_gen(seed, x.device))
        cum = torch.cumsum(x, 1)
        idx = (cum <= r.unsqueeze(1)).sum(1).clamp(max=x.shape[1] - 1)
        return idx.to(torch.int64)
    return k


def _random_bsl_shape(ins, attrs):
    x = first(ins, "Input")
    shape = list(attrs["shape"])
    shape[attrs.get("output_dim_idx", 0)] = x.shape[attrs.get("input_dim_idx", 0)]
    return {"Out": OutMeta(shape, attrs["dtype"])}


def _bsl(fill):
    def factory(op, ctx):
        shape = [int(d) for d in attr(op, "shape")]
        idim, odim, seed = attr(op, "input_dim_idx", 0), attr(op, "output_dim_idx", 0), attr(op, "seed", 0)
        dt = torch_dtype(attr(op, "dtype", 5))

        def k(x):
            s = list(shape)
            s[odim] = x.shape[idim]
            out = torch.empty(s, dtype=dt, device=x.device)
            return fill(op, out, _gen(seed, x.device))
        return k
    return factory


defop("uniform_random_batch_size_like", inputs=("Input",), infer_shape=_random_bsl_shape, differentiable=False,
      random=True)(
    _bsl(lambda op, out, g: out.uniform_(float(attr(op, "min", -1.0)), float(attr(op, "max", 1.0)), generator=g)))
defop("gaussian_random_batch_size_like", inputs=("Input",), infer_shape=_random_bsl_shape, differentiable=False,
      random=True)(
    _bsl(lambda op, out, g: out.normal_(float(attr(op, "mean", 0.0)), float(attr(op, "std", 1.0)), generator=g)))
