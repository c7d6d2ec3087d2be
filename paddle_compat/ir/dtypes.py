"""Data types: Paddle's VarDesc.VarType enum, comparable with numpy dtypes and strings.

Pure Python: the front end names dtypes without importing torch or numpy kernels.
"""

import numpy as np


class _VarTypeMember:
    """One enum member. Equal to itself, to its int code, to its numpy dtype and its string name."""

    __slots__ = ("name", "value", "np_name")

    def __init__(self, name, value, np_name=None):
        self.name = name
        self.value = value
        self.np_name = np_name

    def __repr__(self):
        return "VarType." + self.name

    def __str__(self):
        return self.np_name or self.name

    def __hash__(self):
        return hash(self.value)

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __eq__(self, other):
        if isinstance(other, _VarTypeMember):
            return self.value == other.value
        if isinstance(other, int) and not isinstance(other, bool):
            return self.value == other
        if self.np_name is None:
            return False
        try:
            return convert_dtype(other) is self
        except (TypeError, ValueError):
            return False

    def __ne__(self, other):
        return not self.__eq__(other)


class VarType:
    """Paddle's proto::VarType::Type codes (the numbers are Paddle's, used in its file format)."""

    BOOL = _VarTypeMember("BOOL", 0, "bool")
    INT16 = _VarTypeMember("INT16", 1, "int16")
    INT32 = _VarTypeMember("INT32", 2, "int32")
    INT64 = _VarTypeMember("INT64", 3, "int64")
    FP16 = _VarTypeMember("FP16", 4, "float16")
    FP32 = _VarTypeMember("FP32", 5, "float32")
    FP64 = _VarTypeMember("FP64", 6, "float64")
    LOD_TENSOR = _VarTypeMember("LOD_TENSOR", 7)
    SELECTED_ROWS = _VarTypeMember("SELECTED_ROWS", 8)
    FEED_MINIBATCH = _VarTypeMember("FEED_MINIBATCH", 9)
    FETCH_LIST = _VarTypeMember("FETCH_LIST", 10)
    STEP_SCOPES = _VarTypeMember("STEP_SCOPES", 11)
    LOD_RANK_TABLE = _VarTypeMember("LOD_RANK_TABLE", 12)
    LOD_TENSOR_ARRAY = _VarTypeMember("LOD_TENSOR_ARRAY", 13)
    PLACE_LIST = _VarTypeMember("PLACE_LIST", 14)
    READER = _VarTypeMember("READER", 15)
    RAW = _VarTypeMember("RAW", 17)
    UINT8 = _VarTypeMember("UINT8", 20, "uint8")
    INT8 = _VarTypeMember("INT8", 21, "int8")
    BF16 = _VarTypeMember("BF16", 22, "bfloat16")


class VarDesc:
    VarType = VarType


_BY_NAME = {}
_BY_CODE = {}
for _k, _v in vars(VarType).items():
    if isinstance(_v, _VarTypeMember):
        _BY_CODE[_v.value] = _v
        if _v.np_name:
            _BY_NAME[_v.np_name] = _v
# "float" and "int" are NumPy's spellings, as in Paddle (np.dtype): float64 and int64.
_BY_NAME.update({"float": VarType.FP64, "double": VarType.FP64, "int": VarType.INT64, "long": VarType.INT64,
                 "fp32": VarType.FP32, "fp64": VarType.FP64, "fp16": VarType.FP16})

FLOAT_TYPES = (VarType.FP16, VarType.FP32, VarType.FP64, VarType.BF16)


def convert_dtype(dtype):
    """Any dtype spelling (VarType member or code, 'float32', np.float32, np.dtype) -> VarType member."""
    if isinstance(dtype, _VarTypeMember):
        return dtype
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype in _BY_CODE:
            return _BY_CODE[dtype]
        raise ValueError("unknown VarType code %r" % dtype)
    if isinstance(dtype, str):
        key = dtype.lower()
        if key in _BY_NAME:
            return _BY_NAME[key]
        raise ValueError("unknown dtype %r (expected e.g. 'float32', 'int64')" % dtype)
    if getattr(dtype, "__module__", "") == "torch" or type(dtype).__name__ == "dtype" and \
            str(dtype).startswith("torch."):
        return convert_dtype(str(dtype)[len("torch."):])
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise TypeError("cannot interpret %r as a dtype" % (dtype,))
    if name in _BY_NAME:
        return _BY_NAME[name]
    raise ValueError("dtype %r is not supported" % (dtype,))


def dtype_name(dtype):
    """'float32' etc.: the numpy name of a tensor dtype."""
    member = convert_dtype(dtype)
    if member.np_name is None:
        raise ValueError("%r is not a tensor data type" % member)
    return member.np_name


def is_float(dtype):
    return convert_dtype(dtype) in FLOAT_TYPES


# Paddle's public helper names.
convert_np_dtype_to_dtype_ = convert_dtype
