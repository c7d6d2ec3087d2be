"""Paddle's framework.proto ProgramDesc, read and written with our own schema (field numbers from the
documented format; see proto_wire for the encoding).

    ProgramDesc  blocks=1 (BlockDesc), version=4 (Version: version=1)
    BlockDesc    idx=1 parent_idx=2 vars=3 (VarDesc) ops=4 (OpDesc) forward_block_idx=5
    VarDesc      name=1 type=2 (VarType) persistable=3 need_check_feed=4
    VarType      type=1 selected_rows=2 (TensorDesc) lod_tensor=3 / tensor_array=4 (LoDTensorDesc)
    TensorDesc   data_type=1 dims=2;  LoDTensorDesc  tensor=1 lod_level=2
    OpDesc       inputs=1 outputs=2 (Var: parameter=1 arguments=2) type=3 attrs=4 is_target=5
    Attr         name=1 type=2 i=3 f=4 s=5 ints=6 floats=7 strings=8 b=10 bools=11 block_idx=12 l=13
                 blocks_idx=14 longs=15
"""

import json
import os

import numpy as np

from . import op_info, proto_wire as w
from .dtypes import VarType, _VarTypeMember, convert_dtype

__all__ = ["AttrType", "attr_types", "recorded_protos", "guess_attr_type", "encode_op", "encode_var", "serialize_program",
           "serialize_inference_model", "encode_io_op", "encode_io_var", "decode_program", "io_names",
           "strip_feed_fetch", "PROGRAM_VERSION"]


class AttrType:
    """framework.proto's AttrType numbers (fluid.core.AttrType)."""
    INT, FLOAT, STRING, INTS, FLOATS, STRINGS, BOOLEAN, BOOLEANS, BLOCK, LONG, BLOCKS, LONGS = range(12)


INT, FLOAT, STRING, INTS, FLOATS, STRINGS = AttrType.INT, AttrType.FLOAT, AttrType.STRING, AttrType.INTS, \
    AttrType.FLOATS, AttrType.STRINGS
BOOLEAN, BOOLEANS, BLOCK, LONG, BLOCKS, LONGS = AttrType.BOOLEAN, AttrType.BOOLEANS, AttrType.BLOCK, AttrType.LONG, \
    AttrType.BLOCKS, AttrType.LONGS
PROGRAM_VERSION = 0      # what Paddle 1.8.5 writes
_I32 = 2 ** 31
_PROTOS = None


def recorded_protos():
    """{op type: {"inputs": [[slot, flags]], "outputs": [...], "attrs": [[name, AttrType, default]], ...}}:
    Paddle 1.8.5's op registry, recorded by tests/data/paddle18/make_op_protos.py into op_protos.json. The one
    source of Paddle's ops' attribute types and defaults: the ProgramDesc writer here and the op declarations
    (paddle_compat/ops/protos.py) both read it."""
    global _PROTOS
    if _PROTOS is None:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "op_protos.json")) as f:
            _PROTOS = json.load(f)
    return _PROTOS


class _AttrTypes:
    """{op type: {attr: AttrType}}, answered from the recorded protos for Paddle's ops and from the op's
    declaration (ops/registry OpDef.attrs, through op_info) for the ops only this package declares."""

    def __init__(self):
        self._cache = {}

    def get(self, op_type, default=None):
        got = self._cache.get(op_type)
        if got is None:
            rec = recorded_protos().get(op_type)
            attrs = rec["attrs"] if rec is not None else op_info.declared_attrs(op_type)
            if rec is None and not attrs:
                return default
            got = self._cache[op_type] = {n: t for n, t, _ in attrs}
        return got

    def __getitem__(self, op_type):
        got = self.get(op_type)
        if got is None:
            raise KeyError(op_type)
        return got

    def __contains__(self, op_type):
        return self.get(op_type) is not None


_ATTR_TYPES = _AttrTypes()


def attr_types():
    """{op type: {attr: type}} as Paddle 1.8.5's op registry declares them (and our declarations for the ops
    Paddle lacks): Paddle checks an attribute's type against it when it creates the op, so a value must be
    written with the declared type (an int `scale` must go out as FLOAT)."""
    return _ATTR_TYPES


def _is_block(v):
    # a Block (this module sits below block.py: blocks are told by what they hold, as Operator.copy_to does)
    return hasattr(v, "ops") and hasattr(v, "idx")


def guess_attr_type(v):
    """The AttrType a Python attribute value is written with when Paddle declares none."""
    if isinstance(v, _VarTypeMember):      # dtype attributes: Paddle stores the proto enum as an INT
        return INT
    if isinstance(v, (bool, np.bool_)):
        return BOOLEAN
    if isinstance(v, (int, np.integer)):
        return INT if -_I32 <= v < _I32 else LONG
    if isinstance(v, (float, np.floating)):
        return FLOAT
    if isinstance(v, str):
        return STRING
    if _is_block(v):
        return BLOCK
    if isinstance(v, (list, tuple)):
        if not v:
            return INTS
        if all(_is_block(x) for x in v):
            return BLOCKS
        if all(isinstance(x, str) for x in v):
            return STRINGS
        if all(isinstance(x, (bool, np.bool_)) for x in v):
            return BOOLEANS
        if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in v):
            return INTS if all(-_I32 <= x < _I32 for x in v) else LONGS
        if all(isinstance(x, (int, float, np.integer, np.floating)) for x in v):
            return FLOATS
    return None


def _encode_attr(name, t, v):
    out = w.f_bytes(1, name) + w.f_varint(2, t)
    if t in (INT, LONG):
        return out + w.f_varint(3 if t == INT else 13, int(v))
    if t == FLOAT:
        return out + w.f_float(4, v)
    if t == STRING:
        return out + w.f_bytes(5, v if isinstance(v, (str, bytes)) else str(v))
    if t == BOOLEAN:
        return out + w.f_varint(10, bool(v))
    if t == BLOCK:
        return out + w.f_varint(12, v if isinstance(v, int) else v.idx)
    field, enc = {INTS: (6, lambda x: w.f_varint(6, int(x))), LONGS: (15, lambda x: w.f_varint(15, int(x))),
                  FLOATS: (7, lambda x: w.f_float(7, x)), STRINGS: (8, lambda x: w.f_bytes(8, str(x))),
                  BOOLEANS: (11, lambda x: w.f_varint(11, bool(x))),
                  BLOCKS: (14, lambda x: w.f_varint(14, x if isinstance(x, int) else x.idx))}[t]
    return out + b"".join(enc(x) for x in v)


def encode_op(op, types):
    out = bytearray()
    for field, slots in ((1, op.inputs), (2, op.outputs)):
        for slot, args in slots.items():
            out += w.f_bytes(field, w.f_bytes(1, slot) + b"".join(w.f_bytes(2, a) for a in args))
    out += w.f_bytes(3, op.type)
    declared = types.get(op.type, {})
    for name in sorted(op.attrs):
        v = op.attrs[name]
        if v is None:
            continue
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if isinstance(v, (set, frozenset)):
            v = sorted(v)
        enc = None
        for t in (declared.get(name), guess_attr_type(v)):
            if t is None:
                continue
            if t in (INTS, FLOATS, STRINGS, BOOLEANS, LONGS, BLOCKS) and not isinstance(v, (list, tuple)):
                v = [v]
            try:
                enc = _encode_attr(name, t, v)
                break
            except (TypeError, ValueError, AttributeError):
                continue       # our value does not fit Paddle's declared type: write it as what it is
        if enc is not None:    # else: not representable in a ProgramDesc (an internal Python-side attribute)
            out += w.f_bytes(4, enc)
    return bytes(out)


def encode_var(v):
    t = int(v.type)
    tensor = w.f_varint(1, int(v.dtype)) + b"".join(w.f_varint(2, int(d)) for d in v.shape)
    vt = w.f_varint(1, t)
    if t == int(VarType.LOD_TENSOR):
        vt += w.f_bytes(3, w.f_bytes(1, tensor) + w.f_varint(2, v.lod_level))
    elif t == int(VarType.SELECTED_ROWS):
        vt += w.f_bytes(2, tensor)
    elif t == int(VarType.LOD_TENSOR_ARRAY):
        vt += w.f_bytes(4, w.f_bytes(1, tensor) + w.f_varint(2, v.lod_level))
    out = w.f_bytes(1, v.name) + w.f_bytes(2, vt) + w.f_varint(3, bool(v.persistable))
    if getattr(v, "need_check_feed", False):
        out += w.f_varint(4, True)
    return out


def serialize_program(program, extra_ops=None):
    """Paddle's ProgramDesc bytes for a Program. extra_ops(block_idx) -> (vars, ops_before, ops_after)
    lets save_inference_model add feed/fetch ops without touching the program."""
    types = attr_types()
    out = bytearray()
    for b in program.blocks:
        body = w.f_varint(1, b.idx) + w.f_varint(2, b.parent_idx)
        pre_vars, before, after = extra_ops(b.idx) if extra_ops else ((), (), ())
        body += b"".join(w.f_bytes(3, x) for x in pre_vars)
        body += b"".join(w.f_bytes(3, encode_var(v)) for v in b.vars.values())
        body += b"".join(w.f_bytes(4, x) for x in before)
        body += b"".join(w.f_bytes(4, encode_op(op, types)) for op in b.ops)
        body += b"".join(w.f_bytes(4, x) for x in after)
        if b.forward_block_idx >= 0:    # set only on backward blocks (as Paddle writes it)
            body += w.f_varint(5, b.forward_block_idx)
        out += w.f_bytes(1, body)
    out += w.f_bytes(4, w.f_varint(1, PROGRAM_VERSION))
    return bytes(out)


def serialize_inference_model(program, feed_names, fetch_names):
    """__model__ as Paddle's save_inference_model writes it: feed ops (column i feeds feed_names[i]) before
    the program's ops, fetch ops after, reading from/writing to the `feed` and `fetch` variables."""
    def extra(idx):
        if idx != 0:
            return (), (), ()
        io_vars = [encode_io_var("feed", VarType.FEED_MINIBATCH), encode_io_var("fetch", VarType.FETCH_LIST)]
        before = [encode_io_op("feed", "X", "feed", "Out", n, i) for i, n in enumerate(feed_names)][::-1]
        after = [encode_io_op("fetch", "X", n, "Out", "fetch", i) for i, n in enumerate(fetch_names)]
        return io_vars, before, after
    return serialize_program(program, extra)


def encode_io_op(op_type, slot_in, arg_in, slot_out, arg_out, col):
    """A feed or fetch op, as Paddle's save_inference_model writes them."""
    class _Op:
        type = op_type
        inputs = {slot_in: [arg_in]}
        outputs = {slot_out: [arg_out]}
        attrs = {"col": col}
    return encode_op(_Op, {})


def encode_io_var(name, var_type):
    return w.f_bytes(1, name) + w.f_bytes(2, w.f_varint(1, int(var_type))) + w.f_varint(3, True)


# -- reading -----------------------------------------------------------------------------------------

def _decode_attr(raw):
    f = w.parse(raw)
    name, t = w.one_string(f, 1), w.one_int(f, 2)
    if t == INT:
        v = w.one_int(f, 3, 0)
    elif t == LONG:
        v = w.one_int(f, 13, 0)
    elif t == FLOAT:
        v = (w.floats(f, 4) or [0.0])[-1]
    elif t == STRING:
        v = w.one_string(f, 5, "")
    elif t == BOOLEAN:
        v = bool(w.one_int(f, 10, 0))
    elif t == BLOCK:
        v = ("__block__", w.one_int(f, 12))
    elif t == INTS:
        v = w.ints(f, 6)
    elif t == LONGS:
        v = w.ints(f, 15)
    elif t == FLOATS:
        v = w.floats(f, 7)
    elif t == STRINGS:
        v = w.strings(f, 8)
    elif t == BOOLEANS:
        v = [bool(x) for x in w.ints(f, 11)]
    elif t == BLOCKS:
        v = [("__block__", i) for i in w.ints(f, 14)]
    else:
        raise w.WireError("attribute %r has unknown type %d" % (name, t))
    return name, v


def _decode_slots(raws):
    out = {}
    for raw in raws:
        f = w.parse(raw)
        out[w.one_string(f, 1)] = w.strings(f, 2)
    return out


def _decode_var(raw):
    f = w.parse(raw)
    name = w.one_string(f, 1)
    vts = w.blobs(f, 2)
    if not vts:
        raise w.WireError("variable %r has no type" % name)
    vt = w.parse(vts[-1])
    t = w.one_int(vt, 1)
    dtype, shape, lod_level = VarType.FP32, (), 0
    sub = w.blobs(vt, {int(VarType.SELECTED_ROWS): 2, int(VarType.LOD_TENSOR): 3,
                       int(VarType.LOD_TENSOR_ARRAY): 4}.get(t, -1))
    if sub:
        s = w.parse(sub[-1])
        if t == int(VarType.SELECTED_ROWS):
            tensor = s
        else:
            tensor = w.parse(w.blobs(s, 1)[-1]) if w.blobs(s, 1) else {}
            lod_level = w.one_int(s, 2, 0)
        if tensor:
            dtype = convert_dtype(w.one_int(tensor, 1))
            shape = tuple(w.ints(tensor, 2))
    return dict(name=name, type=convert_dtype(t), dtype=dtype, shape=shape, lod_level=lod_level,
                persistable=bool(w.one_int(f, 3, 0)), need_check_feed=bool(w.one_int(f, 4, 0)))


def decode_program(data):
    """Paddle's ProgramDesc bytes -> one record per block: (idx, parent_idx, forward_block_idx, [variable
    kwargs], [(op type, inputs, outputs, attrs)]); a block-valued attribute is ("__block__", index).
    Raises proto_wire.WireError on malformed input."""
    top = w.parse(data)
    if not w.blobs(top, 1):
        raise w.WireError("no blocks")
    decoded = []
    for raw in w.blobs(top, 1):
        f = w.parse(raw)
        decoded.append((w.one_int(f, 1), w.one_int(f, 2), f))
    if [d[0] for d in decoded] != list(range(len(decoded))):
        raise w.WireError("block indices %s are not 0..%d" % ([d[0] for d in decoded], len(decoded) - 1))
    out = []
    for idx, parent, f in decoded:
        var_records = [_decode_var(raw) for raw in w.blobs(f, 3)]
        op_records = []
        for raw in w.blobs(f, 4):
            o = w.parse(raw)
            attrs = dict(_decode_attr(a) for a in w.blobs(o, 4))
            op_records.append((w.one_string(o, 3), _decode_slots(w.blobs(o, 1)), _decode_slots(w.blobs(o, 2)),
                               attrs))
        out.append((idx, parent, w.one_int(f, 5, -1), var_records, op_records))
    return out


def io_names(program, op_type, slot):
    ops = [op for op in program.global_block().ops if op.type == op_type]
    ops.sort(key=lambda op: op.attrs.get("col", 0))
    return [(op.outputs if slot == "Out" else op.inputs)[slot][0] for op in ops]


def strip_feed_fetch(program):
    """Feed and fetch target names from the feed/fetch ops Paddle writes into __model__, and the program
    without them (our executor adds its own)."""
    feeds, fetches = io_names(program, "feed", "Out"), io_names(program, "fetch", "X")
    gb = program.global_block()
    io_vars = set()
    for op in gb.ops:
        if op.type == "feed":
            io_vars.update(op.inputs.get("X", []))
        elif op.type == "fetch":
            io_vars.update(op.outputs.get("Out", []))
    gb.ops = [op for op in gb.ops if op.type not in ("feed", "fetch")]
    for n in io_vars:
        gb.vars.pop(n, None)
    program._bump()
    return feeds, fetches
