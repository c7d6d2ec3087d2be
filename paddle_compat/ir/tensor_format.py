"""Paddle's on-disk tensor format (what `save`/`save_combine` ops write), so checkpoints move both ways
between real Paddle and this package.

LoDTensor = uint32 version(0) | uint64 lod_level | per level: uint64 nbytes, uint64 offsets[]
          | Tensor = uint32 version(0) | int32 desc_size | TensorDesc protobuf | raw data (C order)
TensorDesc (proto2): field 1 data_type (varint enum), field 2 dims (repeated int64, unpacked); written and
read with proto_wire, the one protobuf codec of the package.
SelectedRows = uint32 version(0) | uint64 nrows | int64 rows[] | int64 height | Tensor.
"""

import io
import os
import struct
import tempfile

import numpy as np

from . import proto_wire as w
from .dtypes import convert_dtype, dtype_name


def _tensor_desc(dtype, shape):
    """TensorDesc bytes: data_type, then each dim (unpacked, as Paddle writes them)."""
    return w.f_varint(1, int(convert_dtype(np.dtype(dtype)))) + b"".join(w.f_varint(2, int(d)) for d in shape)


def _parse_desc(buf):
    try:
        fields = w.parse(buf)
        codes = w.ints(fields, 1)
        dims = w.ints(fields, 2)     # unpacked, or packed as some protobuf versions write them
    except w.WireError as e:
        raise ValueError("corrupt TensorDesc (%s)" % e) from None
    if not codes:
        raise ValueError("corrupt TensorDesc: no data_type")
    return codes[-1], dims


def write_tensor(f, arr):
    arr = np.ascontiguousarray(arr)
    desc = _tensor_desc(arr.dtype, arr.shape)
    f.write(struct.pack("<I", 0))
    f.write(struct.pack("<i", len(desc)))
    f.write(desc)
    f.write(memoryview(arr.reshape(-1)).cast("B") if arr.size else b"")   # no copy of a large table shard


def read_tensor(f, where="<stream>"):
    head = f.read(8)
    if len(head) < 8:
        raise ValueError("%s: truncated tensor header" % where)
    version, size = struct.unpack("<Ii", head)
    if version != 0:
        raise ValueError("%s: unsupported tensor version %d" % (where, version))
    code, dims = _parse_desc(f.read(size))
    dt = np.dtype(dtype_name(convert_dtype(code)))
    n = int(np.prod(dims)) if dims else 1
    out = np.empty(n, dtype=dt)
    got = f.readinto(memoryview(out).cast("B")) if n else 0    # straight into the array: one copy in memory
    if got != n * dt.itemsize:
        raise ValueError("%s: truncated tensor data (%d of %d bytes)" % (where, got or 0, n * dt.itemsize))
    return out.reshape(dims)


def write_lod_tensor(f, arr, lod=None):
    lod = lod or []
    f.write(struct.pack("<I", 0))
    f.write(struct.pack("<Q", len(lod)))
    for level in lod:
        data = np.asarray(level, dtype=np.uint64).tobytes()
        f.write(struct.pack("<Q", len(data)))
        f.write(data)
    write_tensor(f, arr)


def write_lod_tensor_header(f, shape, dtype):
    """What write_lod_tensor writes before the data (no LoD), for a writer that streams the data after it."""
    desc = _tensor_desc(dtype, shape)
    f.write(struct.pack("<IQIi", 0, 0, 0, len(desc)))
    f.write(desc)


def read_lod_tensor(f, where="<stream>"):
    head = f.read(12)
    if len(head) < 12:
        raise ValueError("%s: truncated or empty file (not a Paddle tensor)" % where)
    version, levels = struct.unpack("<IQ", head)
    if version != 0:
        raise ValueError("%s: unsupported LoDTensor version %d" % (where, version))
    lod = []
    for _ in range(levels):
        (nbytes,) = struct.unpack("<Q", f.read(8))
        lod.append([int(x) for x in np.frombuffer(f.read(nbytes), dtype=np.uint64)])
    return read_tensor(f, where), lod


def read_lod_header(path):
    """The dims of the LoDTensor in file `path`, without reading its data."""
    with open(path, "rb") as f:
        head = f.read(12)
        if len(head) < 12:
            raise ValueError("%s: truncated or empty file (not a Paddle tensor)" % path)
        _, levels = struct.unpack("<IQ", head)
        for _ in range(levels):
            (nbytes,) = struct.unpack("<Q", f.read(8))
            f.seek(nbytes, 1)
        version, size = struct.unpack("<Ii", f.read(8))
        return _parse_desc(f.read(size))[1]


def write_selected_rows(f, rows, height, values):
    f.write(struct.pack("<I", 0))
    rows = np.asarray(rows, dtype=np.int64)
    f.write(struct.pack("<Q", rows.size))
    f.write(rows.tobytes())
    f.write(struct.pack("<q", int(height)))
    write_tensor(f, values)


def read_selected_rows(f, where="<stream>"):
    version, n = struct.unpack("<IQ", f.read(12))
    rows = np.frombuffer(f.read(8 * n), dtype=np.int64).copy()
    (height,) = struct.unpack("<q", f.read(8))
    return rows, height, read_tensor(f, where)


def atomic_write(path, writer):
    """Write via a temp file in the same directory and rename: a crash never leaves a half-written file."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            writer(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def dumps_lod_tensor(arr, lod=None):
    buf = io.BytesIO()
    write_lod_tensor(buf, arr, lod)
    return buf.getvalue()
