"""save / load / save_combine / load_combine in Paddle's file format (see ir/tensor_format.py)."""

import os

import torch

from ....ir import lod_as_tensors, tensor_format as tf
from ....ops import kernel
from .common import attr
from ....ir import dtype_name

_CHECKED_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")


def _to_numpy(t):
    return t.detach().cpu().numpy()


def _check_shape(ctx, name, arr, path):
    v = ctx.var(name)
    if v is None:
        return
    # Paddle loads whatever dtype the file holds; a program that declares another one is a mix-up of
    # files, so we say so instead of computing with the wrong type.
    try:
        want_dtype = dtype_name(v.dtype)
    except (ValueError, TypeError, KeyError):
        want_dtype = None
    if want_dtype and want_dtype != arr.dtype.name and arr.dtype.name in _CHECKED_DTYPES:
        raise ValueError("load %s from %s: the program expects dtype %s, the file holds %s"
                         % (name, path, want_dtype, arr.dtype.name))
    if not v.shape:
        return
    want = list(v.shape)
    got = list(arr.shape)
    if len(want) != len(got) or any(w >= 0 and w != g for w, g in zip(want, got)):
        raise ValueError("load %s from %s: the program expects shape %s, the file holds %s"
                         % (name, path, want, got))


def _write(f, t, lod):
    if t.is_sparse:
        t = t.coalesce()
        tf.write_selected_rows(f, _to_numpy(t.indices()[0]), t.shape[0], _to_numpy(t.values()))
    else:
        tf.write_lod_tensor(f, _to_numpy(t), lod)


@kernel("save")
def save(op, ctx):
    path, overwrite = attr(op, "file_path"), attr(op, "overwrite", True)
    name = op.input("X")[0]

    def k(x, lod):
        if x is None:
            raise ValueError("save: variable %s holds no value" % name)
        if not overwrite and os.path.exists(path):
            raise FileExistsError("save: %s exists and overwrite=False" % path)
        tf.atomic_write(path, lambda f: _write(f, x, lod))
    return k


@kernel("load")
def load(op, ctx):
    path, name, device = attr(op, "file_path"), op.output("Out")[0], ctx.device
    seek, part = int(attr(op, "seek", -1)), [int(d) for d in (attr(op, "shape", []) or [])]

    def k():
        if not os.path.exists(path):
            raise FileNotFoundError("load: no file %s for variable %s" % (path, name))
        with open(path, "rb") as f:
            arr, lod = tf.read_lod_tensor(f, path)
        if seek >= 0:
            arr = _seek(arr, seek, part, path, name)
        _check_shape(ctx, name, arr, path)
        return torch.from_numpy(arr).to(device), lod_as_tensors(lod, device)
    return k


def _seek(arr, seek, shape, path, name):
    """Paddle 1.8's load with `seek` and `shape`: the prod(shape) values from element `seek` of the file's
    data (in order), as a tensor of `shape` (a slice of rows of a saved table)."""
    n = 1
    for d in shape:
        n *= d
    flat = arr.reshape(-1)
    if not shape or seek + n > flat.size:
        raise ValueError("load %s from %s: seek %d with shape %s reaches past the %d values the file holds"
                         % (name, path, seek, shape, flat.size))
    return flat[seek:seek + n].reshape(shape).copy()


@kernel("save_combine")
def save_combine(op, ctx):
    path = attr(op, "file_path")

    def k(xs):
        def writer(f):
            for x in xs:
                tf.write_lod_tensor(f, _to_numpy(x), None)
        tf.atomic_write(path, writer)
    return k


@kernel("load_combine")
def load_combine(op, ctx):
    path, names, device = attr(op, "file_path"), op.output("Out"), ctx.device

    def k():
        out = []
        with open(path, "rb") as f:
            for n in names:
                arr, _ = tf.read_lod_tensor(f, "%s (variable %s)" % (path, n))
                _check_shape(ctx, n, arr, path)
                out.append(torch.from_numpy(arr).to(device))
            if f.read(1):
                raise ValueError("load_combine: %s holds more tensors than the %d variables asked for"
                                 % (path, len(names)))
        return out
    return k
