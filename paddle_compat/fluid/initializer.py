"""Initializers: each adds Paddle's init op (fill_constant, uniform_random, ...) to the startup block."""

import contextlib
import math

import numpy as np

from ..ir import VarType, convert_dtype, dtype_name, unique_name
from ..ops import info

__all__ = ["Constant", "Uniform", "Normal", "TruncatedNormal", "Xavier", "Bilinear", "MSRA",
           "ConstantInitializer", "UniformInitializer", "NormalInitializer", "TruncatedNormalInitializer",
           "XavierInitializer", "BilinearInitializer", "MSRAInitializer", "NumpyArrayInitializer",
           "force_init_on_cpu", "init_on_cpu"]

_force_init_on_cpu_ = False


def force_init_on_cpu():
    return _force_init_on_cpu_


@contextlib.contextmanager
def init_on_cpu():
    global _force_init_on_cpu_
    old = _force_init_on_cpu_
    _force_init_on_cpu_ = True
    try:
        yield
    finally:
        _force_init_on_cpu_ = old


class Initializer:
    def __call__(self, var, block):
        raise NotImplementedError

    @staticmethod
    def _compute_fans(var):
        shape = var.shape
        if not shape or len(shape) == 0:
            return 1, 1
        if len(shape) == 1:
            return shape[0], shape[0]
        if len(shape) == 2:
            return shape[0], shape[1]
        receptive = int(np.prod(shape[2:]))
        return shape[1] * receptive, shape[0] * receptive

    def _seed_for(self, block):
        return self._seed if self._seed != 0 else block.program.random_seed

    @staticmethod
    def _append(block, type, var, attrs, prefix=None, prepend=None):
        """Add the init op of `var`. A float16 variable is initialised as Paddle does: the op fills a float32
        `<prefix>.<var>.tmp_N` and a cast op (appended) writes var.

        Paddle prepends every initializer op but Bilinear's (a startup program lists them newest first). We
        prepend the deterministic ones: those not declared `random` (fill_constant, assign_value) and seeded
        random ops (each draws from its own generator, so order cannot change its numbers); unseeded random
        ones stay appended because they draw from the global generator in op order, and reversing it would
        change every such value."""
        out, dtype = var, convert_dtype(var.dtype)
        if dtype == VarType.FP16:
            dtype = VarType.FP32
            out = block.create_var(name=unique_name.generate(".".join([prefix or type, var.name, "tmp"])),
                                   shape=var.shape, dtype=dtype, type=VarType.LOD_TENSOR, persistable=False)
        attrs = dict(attrs, shape=list(var.shape), dtype=int(dtype))
        if prepend is None:
            prepend = not info(type).random or bool(attrs.get("seed"))
        add = block._prepend_op if prepend else block.append_op
        op = add(type=type, outputs={"Out": [out]}, attrs=attrs)
        if out is not var:
            block.append_op(type="cast", inputs={"X": [out]}, outputs={"Out": [var]},
                            attrs={"in_dtype": int(VarType.FP32), "out_dtype": int(VarType.FP16)})
        var.op = op
        return op


class ConstantInitializer(Initializer):
    def __init__(self, value=0.0, force_cpu=False):
        self._value = float(value)
        self._force_cpu = force_cpu

    def __call__(self, var, block):
        return self._append(block, "fill_constant", var,
                            {"value": self._value, "force_cpu": self._force_cpu or force_init_on_cpu()},
                            prefix="constant_init")


class UniformInitializer(Initializer):
    def __init__(self, low=-1.0, high=1.0, seed=0):
        if low > high:
            raise ValueError("UniformInitializer: low (%s) must be <= high (%s)" % (low, high))
        self._low, self._high, self._seed = float(low), float(high), int(seed)

    def __call__(self, var, block):
        return self._append(block, "uniform_random", var,
                            {"min": self._low, "max": self._high, "seed": self._seed_for(block)})


class NormalInitializer(Initializer):
    def __init__(self, loc=0.0, scale=1.0, seed=0):
        self._mean, self._std, self._seed = float(loc), float(scale), int(seed)

    def __call__(self, var, block):
        return self._append(block, "gaussian_random", var,
                            {"mean": self._mean, "std": self._std, "seed": self._seed_for(block)})


class TruncatedNormalInitializer(NormalInitializer):
    def __call__(self, var, block):
        return self._append(block, "truncated_gaussian_random", var,
                            {"mean": self._mean, "std": self._std, "seed": self._seed_for(block)})


class XavierInitializer(Initializer):
    def __init__(self, uniform=True, fan_in=None, fan_out=None, seed=0):
        self._uniform, self._fan_in, self._fan_out, self._seed = uniform, fan_in, fan_out, int(seed)

    def __call__(self, var, block):
        f_in, f_out = self._compute_fans(var)
        fan_in = f_in if self._fan_in is None else self._fan_in
        fan_out = f_out if self._fan_out is None else self._fan_out
        seed = self._seed_for(block)
        if self._uniform:
            limit = math.sqrt(6.0 / float(fan_in + fan_out))
            return self._append(block, "uniform_random", var, {"min": -limit, "max": limit, "seed": seed},
                                prefix="xavier_init")
        std = math.sqrt(2.0 / float(fan_in + fan_out))
        return self._append(block, "gaussian_random", var, {"mean": 0.0, "std": std, "seed": seed},
                            prefix="xavier_init")


class MSRAInitializer(Initializer):
    def __init__(self, uniform=True, fan_in=None, seed=0):
        self._uniform, self._fan_in, self._seed = uniform, fan_in, int(seed)

    def __call__(self, var, block):
        f_in, _ = self._compute_fans(var)
        fan_in = f_in if self._fan_in is None else self._fan_in
        seed = self._seed_for(block)
        if self._uniform:
            limit = math.sqrt(6.0 / float(fan_in))
            return self._append(block, "uniform_random", var, {"min": -limit, "max": limit, "seed": seed},
                                prefix="masra_init")   # (Paddle 1.8's spelling)
        std = math.sqrt(2.0 / float(fan_in))
        return self._append(block, "gaussian_random", var, {"mean": 0.0, "std": std, "seed": seed},
                            prefix="masra_init")


class BilinearInitializer(Initializer):
    """Bilinear upsampling kernel for conv2d_transpose weights [C, 1, K, K]."""

    def __call__(self, var, block):
        shape = var.shape
        if len(shape) != 4 or shape[2] != shape[3]:
            raise ValueError("BilinearInitializer needs a 4-D weight with square kernels, got %s" % (shape,))
        size = shape[3]
        f = np.ceil(size / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        weight = np.zeros(int(np.prod(shape)), dtype=np.float32)
        for i in range(weight.size):
            x = i % size
            y = (i / size) % size
            weight[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
        # (Paddle appends Bilinear's assign_value, where every other initializer prepends its op)
        return NumpyArrayInitializer(weight.reshape(shape))._assign(var, block, "bilinear_init", prepend=False)


class NumpyArrayInitializer(Initializer):
    def __init__(self, value):
        if not isinstance(value, np.ndarray):
            raise TypeError("NumpyArrayInitializer expects a numpy.ndarray, got %s" % type(value).__name__)
        self._value = value

    def __call__(self, var, block):
        return self._assign(var, block, "numpy_array_init", prepend=True)

    def _assign(self, var, block, prefix, prepend):
        want = dtype_name(var.dtype)
        if tuple(self._value.shape) != tuple(var.shape) and self._value.size != int(np.prod(var.shape)):
            raise ValueError("NumpyArrayInitializer for %s: value shape %s does not match the variable's %s"
                             % (var.name, list(self._value.shape), list(var.shape)))
        # Paddle stores the values as a list attribute; a flat numpy array of the same dtype keeps
        # big weights cheap to hold, print and slice (it indexes and iterates like the list).
        if want in ("float32", "float16", "float64"):
            key, values = "fp32_values", self._value.astype(np.float32).reshape(-1)
        elif want in ("int32", "bool"):
            key, values = "int32_values", self._value.astype(np.int32).reshape(-1)
        elif want == "int64":
            key, values = "int64_values", self._value.astype(np.int64).reshape(-1)
        else:
            raise ValueError("NumpyArrayInitializer: unsupported dtype %s" % want)
        return self._append(block, "assign_value", var, {key: values}, prefix=prefix, prepend=prepend)


Constant = ConstantInitializer
Uniform = UniformInitializer
Normal = NormalInitializer
TruncatedNormal = TruncatedNormalInitializer
Xavier = XavierInitializer
MSRA = MSRAInitializer
Bilinear = BilinearInitializer
