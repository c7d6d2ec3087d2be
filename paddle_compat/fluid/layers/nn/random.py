"""Random tensors and sampling: gaussian_random, uniform_random, randint, randn, randperm, sampling_id,
..._batch_size_like."""

import numpy as np

from ....ir import Variable, convert_dtype
from ...layer_helper import LayerHelper
from ..utils import append_defined, out_var, single

__all__ = ["gaussian_random", "uniform_random", "randn", "randint", "randperm", "sampling_id",
           "uniform_random_batch_size_like", "gaussian_random_batch_size_like"]


def _static_shape(shape, layer):
    if isinstance(shape, Variable) or any(isinstance(d, Variable) for d in shape):
        raise NotImplementedError("%s: a shape given as Variables is not supported; pass ints" % layer)
    shape = [int(d) for d in shape]
    if not shape or any(d <= 0 for d in shape):
        raise ValueError("%s: shape must be a non-empty list of positive ints, got %s" % (layer, shape))
    return shape


def _random(op_type, shape, dtype, attrs, layer, stop_gradient=True, dtype_attr=True):
    shape = _static_shape(shape, layer)
    helper = LayerHelper(layer)
    out = out_var(helper, dtype, stop_gradient=stop_gradient)
    attrs = dict(attrs, shape=shape)
    if dtype_attr:
        attrs["dtype"] = convert_dtype(dtype)
    helper.append_op(type=op_type, inputs={}, outputs={"Out": [out]}, attrs=attrs)
    return out


def gaussian_random(shape, mean=0.0, std=1.0, seed=0, dtype="float32"):
    return _random("gaussian_random", shape, dtype, {"mean": float(mean), "std": float(std), "seed": seed,
                                                     "use_mkldnn": False}, "gaussian_random")


def uniform_random(shape, dtype="float32", min=-1.0, max=1.0, seed=0):
    # Paddle 1.8's layer sets no dtype attr, so the op fills float32 whatever `dtype` says: kept as is.
    return _random("uniform_random", shape, dtype, {"min": float(min), "max": float(max), "seed": seed},
                   "uniform_random", dtype_attr=False)


def randn(shape, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    # Paddle 1.8 draws the op's seed from numpy's global generator.
    return _random("gaussian_random", shape, dtype or "float32",
                   {"mean": 0.0, "std": 1.0, "seed": int(np.random.randint(0, 100)), "use_mkldnn": False}, "randn",
                   stop_gradient)


def randint(low, high=None, shape=None, out=None, dtype=None, device=None, stop_gradient=False, seed=0, name=None):
    if high is None:
        low, high = 0, low
    if low >= high:
        raise ValueError("randint: low (%d) must be less than high (%d)" % (low, high))
    shape = _static_shape([1] if shape is None else shape, "randint")
    return single(append_defined("randint", {}, {"shape": shape, "low": low, "high": high, "seed": seed,
                                                 "dtype": convert_dtype(dtype or "int64")},
                                 stop_gradient=stop_gradient))


def randperm(n, out=None, dtype="int64", device=None, stop_gradient=True, seed=0):
    if n < 1:
        raise ValueError("randperm: n must be >= 1, got %r" % (n,))
    if device not in (None, "cpu", "gpu"):
        raise ValueError("randperm: device must be None, 'cpu' or 'gpu', got %r" % (device,))
    return single(append_defined("randperm", {}, {"n": n, "dtype": convert_dtype(dtype), "seed": seed},
                                 stop_gradient=stop_gradient))


def sampling_id(x, min=0.0, max=1.0, seed=0, dtype="float32"):
    return single(append_defined("sampling_id", {"X": x}, {"min": min, "max": max, "seed": seed},
                                 stop_gradient=True))


def _bsl(op_type, input, shape, dtype, input_dim_idx, output_dim_idx, extra):
    attrs = dict(extra, shape=list(shape), input_dim_idx=input_dim_idx, output_dim_idx=output_dim_idx,
                 dtype=convert_dtype(dtype))
    return single(append_defined(op_type, {"Input": input}, attrs, stop_gradient=True))


def uniform_random_batch_size_like(input, shape, dtype="float32", input_dim_idx=0, output_dim_idx=0, min=-1.0,
                                   max=1.0, seed=0):
    return _bsl("uniform_random_batch_size_like", input, shape, dtype, input_dim_idx, output_dim_idx,
                {"min": min, "max": max, "seed": seed})


def gaussian_random_batch_size_like(input, shape, input_dim_idx=0, output_dim_idx=0, mean=0.0, std=1.0, seed=0,
                                    dtype="float32"):
    return _bsl("gaussian_random_batch_size_like", input, shape, dtype, input_dim_idx, output_dim_idx,
                {"mean": mean, "std": std, "seed": seed})
