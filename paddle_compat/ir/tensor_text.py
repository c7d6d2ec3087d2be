"""Paddle 1.8's text form of a LoDTensor (its C++ operator<<): what `str(tensor)` gives and what
train_from_dataset prints for each fetched variable every print_period batches:

    <info>\\t<var name>\\t\\tlod: {{0, 2, 3}}\\n\\tdim: 3, 1\\n\\tlayout: NCHW\\n\\tdtype: float\\n\\tdata: [0.5 1 2]\\n\\t

Numbers as C++ streams print them by default (6 significant digits, %g); (u)int8 values as the raw character,
as C++ does."""

import numpy as np

_DTYPE_NAMES = {"float32": "float", "float64": "double", "float16": "::paddle::platform::float16",
                "int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t",
                "bool": "bool"}


def _values(a):
    kind = a.dtype.kind
    flat = a.reshape(-1)
    if kind == "f":
        return ["%g" % float(v) for v in flat]
    if kind == "b":
        return ["1" if v else "0" for v in flat]
    if a.dtype.itemsize == 1:
        return [chr(int(v) % 256) for v in flat]
    return [str(int(v)) for v in flat]


def lod_text(lod):
    return "{%s}" % "".join("{%s}" % ", ".join(str(int(o)) for o in level) for level in (lod or []))


def tensor_text(array, lod=None):
    a = np.asarray(array)
    return "\tlod: %s\n\tdim: %s\n\tlayout: NCHW\n\tdtype: %s\n\tdata: [%s]\n" % (
        lod_text(lod), ", ".join(str(d) for d in a.shape), _DTYPE_NAMES.get(a.dtype.name, a.dtype.name),
        " ".join(_values(a)))


def fetch_text(info, name, array, lod=None):
    """One fetched variable as train_from_dataset prints it (Paddle's PrintVar), without the final newline."""
    return "%s\t%s\t%s\t" % (info, name, tensor_text(array, lod))
