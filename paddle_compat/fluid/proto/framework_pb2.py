"""Paddle 1.8's framework.proto (package paddle.framework.proto) as message classes: the messages a
ProgramDesc is made of, OpProto, and the AttrType enum (its values also module constants, INT ... LONGS)."""

from .message import (BOOL, ENUM, FLOAT, INT32, INT64, MESSAGE, OPTIONAL, REPEATED, REQUIRED, STRING, Enum,
                      Field, Message)

AttrType = Enum("AttrType", [("INT", 0), ("FLOAT", 1), ("STRING", 2), ("INTS", 3), ("FLOATS", 4), ("STRINGS", 5),
                             ("BOOLEAN", 6), ("BOOLEANS", 7), ("BLOCK", 8), ("LONG", 9), ("BLOCKS", 10),
                             ("LONGS", 11)])


class Version(Message):
    FIELDS = (Field("version", 1, OPTIONAL, INT64, default=0),)


class OpDesc(Message):
    class Attr(Message):
        FIELDS = (Field("name", 1, REQUIRED, STRING), Field("type", 2, REQUIRED, ENUM, enum=AttrType),
                  Field("i", 3, OPTIONAL, INT32), Field("f", 4, OPTIONAL, FLOAT), Field("s", 5, OPTIONAL, STRING),
                  Field("ints", 6, REPEATED, INT32), Field("floats", 7, REPEATED, FLOAT),
                  Field("strings", 8, REPEATED, STRING), Field("b", 10, OPTIONAL, BOOL),
                  Field("bools", 11, REPEATED, BOOL), Field("block_idx", 12, OPTIONAL, INT32),
                  Field("l", 13, OPTIONAL, INT64), Field("blocks_idx", 14, REPEATED, INT32),
                  Field("longs", 15, REPEATED, INT64))

    class Var(Message):
        FIELDS = (Field("parameter", 1, REQUIRED, STRING), Field("arguments", 2, REPEATED, STRING))

    FIELDS = (Field("type", 3, REQUIRED, STRING),
              Field("inputs", 1, REPEATED, MESSAGE, message=lambda: OpDesc.Var),
              Field("outputs", 2, REPEATED, MESSAGE, message=lambda: OpDesc.Var),
              Field("attrs", 4, REPEATED, MESSAGE, message=lambda: OpDesc.Attr),
              Field("is_target", 5, OPTIONAL, BOOL, default=False))


class OpProto(Message):
    class Var(Message):
        FIELDS = (Field("name", 1, REQUIRED, STRING), Field("comment", 2, REQUIRED, STRING),
                  Field("duplicable", 3, OPTIONAL, BOOL, default=False),
                  Field("intermediate", 4, OPTIONAL, BOOL, default=False),
                  Field("dispensable", 5, OPTIONAL, BOOL, default=False))

    class Attr(Message):
        FIELDS = (Field("name", 1, REQUIRED, STRING), Field("type", 2, REQUIRED, ENUM, enum=AttrType),
                  Field("comment", 3, REQUIRED, STRING), Field("generated", 4, OPTIONAL, BOOL, default=False))

    FIELDS = (Field("type", 1, REQUIRED, STRING),
              Field("inputs", 2, REPEATED, MESSAGE, message=lambda: OpProto.Var),
              Field("outputs", 3, REPEATED, MESSAGE, message=lambda: OpProto.Var),
              Field("attrs", 4, REPEATED, MESSAGE, message=lambda: OpProto.Attr),
              Field("comment", 5, REQUIRED, STRING))


_VAR_TYPES = [("BOOL", 0), ("INT16", 1), ("INT32", 2), ("INT64", 3), ("FP16", 4), ("FP32", 5), ("FP64", 6),
              ("SIZE_T", 19), ("UINT8", 20), ("INT8", 21), ("LOD_TENSOR", 7), ("SELECTED_ROWS", 8),
              ("FEED_MINIBATCH", 9), ("FETCH_LIST", 10), ("STEP_SCOPES", 11), ("LOD_RANK_TABLE", 12),
              ("LOD_TENSOR_ARRAY", 13), ("PLACE_LIST", 14), ("READER", 15), ("RAW", 17), ("TUPLE", 18)]


class VarType(Message):
    Type = Enum("Type", _VAR_TYPES)

    class TensorDesc(Message):
        FIELDS = (Field("data_type", 1, REQUIRED, ENUM, enum=Enum("Type", _VAR_TYPES)),
                  Field("dims", 2, REPEATED, INT64))

    class LoDTensorDesc(Message):
        FIELDS = (Field("tensor", 1, REQUIRED, MESSAGE, message=lambda: VarType.TensorDesc),
                  Field("lod_level", 2, OPTIONAL, INT32, default=0))

    class LoDTensorArrayDesc(Message):
        FIELDS = (Field("tensor", 1, REQUIRED, MESSAGE, message=lambda: VarType.TensorDesc),
                  Field("lod_level", 2, OPTIONAL, INT32, default=0))

    class ReaderDesc(Message):
        FIELDS = (Field("lod_tensor", 1, REPEATED, MESSAGE, message=lambda: VarType.LoDTensorDesc),)

    class Tuple(Message):
        FIELDS = (Field("element_type", 1, REPEATED, ENUM, enum=Enum("Type", _VAR_TYPES)),)

    FIELDS = (Field("type", 1, REQUIRED, ENUM, enum=Enum("Type", _VAR_TYPES)),
              Field("selected_rows", 2, OPTIONAL, MESSAGE, message=lambda: VarType.TensorDesc),
              Field("lod_tensor", 3, OPTIONAL, MESSAGE, message=lambda: VarType.LoDTensorDesc),
              Field("tensor_array", 4, OPTIONAL, MESSAGE, message=lambda: VarType.LoDTensorArrayDesc),
              Field("reader", 5, OPTIONAL, MESSAGE, message=lambda: VarType.ReaderDesc),
              Field("tuple", 7, OPTIONAL, MESSAGE, message=lambda: VarType.Tuple))


for _n, _v in _VAR_TYPES:          # VarType.LOD_TENSOR, VarType.FP32, ... as generated code
    setattr(VarType, _n, _v)


class VarDesc(Message):
    FIELDS = (Field("name", 1, REQUIRED, STRING), Field("type", 2, REQUIRED, MESSAGE, message=lambda: VarType),
              Field("persistable", 3, OPTIONAL, BOOL, default=False),
              Field("need_check_feed", 4, OPTIONAL, BOOL, default=False))


class BlockDesc(Message):
    FIELDS = (Field("idx", 1, REQUIRED, INT32), Field("parent_idx", 2, REQUIRED, INT32),
              Field("vars", 3, REPEATED, MESSAGE, message=lambda: VarDesc),
              Field("ops", 4, REPEATED, MESSAGE, message=lambda: OpDesc),
              Field("forward_block_idx", 5, OPTIONAL, INT32, default=-1))


_COMPATIBLE_TYPES = [("COMPATIBLE", 0), ("DEFINITELY_NOT", 1), ("POSSIBLE", 2), ("BUG_FIX", 3),
                     ("PRECISION_CHANGE", 4)]


class CompatibleInfo(Message):
    Type = Enum("Type", _COMPATIBLE_TYPES)
    FIELDS = (Field("version", 1, REQUIRED, STRING),
              Field("type", 2, REQUIRED, ENUM, enum=Enum("Type", _COMPATIBLE_TYPES)))


for _n, _v in _COMPATIBLE_TYPES:
    setattr(CompatibleInfo, _n, _v)


class OpCompatibleMap(Message):
    class OpCompatiblePair(Message):
        FIELDS = (Field("op_name", 1, REQUIRED, STRING),
                  Field("compatible_info", 2, REQUIRED, MESSAGE, message=lambda: CompatibleInfo))

    FIELDS = (Field("pair", 1, REPEATED, MESSAGE, message=lambda: OpCompatibleMap.OpCompatiblePair),
              Field("default_required_version", 2, OPTIONAL, STRING))


class ProgramDesc(Message):
    FIELDS = (Field("blocks", 1, REPEATED, MESSAGE, message=lambda: BlockDesc),
              Field("version", 4, OPTIONAL, MESSAGE, message=lambda: Version),
              Field("op_compatible_map", 3, OPTIONAL, MESSAGE, message=lambda: OpCompatibleMap))


# framework_pb2.INT, .FLOAT, .STRING ... (AttrType's values as module constants, as generated code has them);
# set last: the field kinds above share some of these names
globals().update({_n: _v for _n, _v in AttrType.items()})
