"""Paddle's desc-level API (fluid.core.ProgramDesc, BlockDesc, OpDesc, VarDesc) as views of our Program,
Block, Operator and Variable: `program.desc`, `block.desc`, `op.desc` and `var.desc` are these, and a
`core.ProgramDesc()` built by hand is a view of a new Program.  A change made through a view is a change of
the program (Paddle keeps a C++ desc and a Python object in step with `_sync_with_cpp`; here there is one).

Two views of the same object are equal and hash alike (Paddle's tests compare `block.op(i)` with what
`append_op()` returned).
"""

import copy

from . import proto_wire as _w
from .dtypes import VarDesc as _VarDescBase
from .dtypes import VarType, convert_dtype
from .proto_desc import PROGRAM_VERSION, _attr_types, _encode_op, _encode_var, _guess_type, _io_names, \
    serialize_program
from ..ops import protos as _protos
from ..ops import registry as _registry
from ..ops.protos import AttrType  # noqa: F401  (fluid.core.AttrType)

__all__ = ["ProgramDesc", "BlockDesc", "OpDesc", "VarDesc", "AttrType"]


def _text(name):
    return name.decode() if isinstance(name, bytes) else name


class _View:
    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def __eq__(self, other):
        return type(other) is type(self) and other._obj is self._obj

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((type(self).__name__, id(self._obj)))


class ProgramDesc(_View):
    """core.ProgramDesc(): a new, empty program (one block); ProgramDesc(bytes): parsed from Paddle's
    ProgramDesc bytes; ProgramDesc(other_desc): a copy."""
    __slots__ = ()

    def __init__(self, source=None):
        from .program import Program
        if source is None:
            program = Program()
        elif isinstance(source, Program):
            program = source
        elif isinstance(source, ProgramDesc):
            program = source._obj.clone()
        elif isinstance(source, (bytes, bytearray)):
            program = Program.parse_from_string(bytes(source))
        else:
            raise TypeError("ProgramDesc() takes nothing, ProgramDesc bytes or another ProgramDesc, got %s"
                            % type(source).__name__)
        super().__init__(program)

    @property
    def program(self):
        return self._obj

    def block(self, index):
        return BlockDesc(self._obj.blocks[index])

    def num_blocks(self):
        return len(self._obj.blocks)

    def append_block(self, parent):
        """A new block whose parent is `parent` (a BlockDesc); unlike Program._create_block it does not become
        the program's current block."""
        from .program import Block
        p = self._obj
        b = Block(p, len(p.blocks), parent.id if isinstance(parent, BlockDesc) else int(parent))
        p.blocks.append(b)
        p._bump()
        return BlockDesc(b)

    def serialize_to_string(self):
        return serialize_program(self._obj)

    def get_feed_target_names(self):
        return _io_names(self._obj, "feed", "Out")

    def get_fetch_target_names(self):
        return _io_names(self._obj, "fetch", "X")

    def flush(self):
        """Nothing to flush: there is no C++ side."""

    def _version(self):
        return PROGRAM_VERSION


class BlockDesc(_View):
    __slots__ = ()

    @property
    def id(self):
        return self._obj.idx

    @property
    def parent(self):
        return self._obj.parent_idx

    def get_forward_block_idx(self):
        return self._obj.forward_block_idx

    def _set_forward_block_idx(self, idx):
        self._obj.forward_block_idx = idx

    set_forward_block_idx = _set_forward_block_idx

    # variables -----------------------------------------------------------------------------------
    def var(self, name):
        """The variable `name` of this block, created (a LOD_TENSOR, float32, no shape) when missing."""
        name = _text(name)
        b = self._obj
        v = b.vars.get(name)
        if v is None:
            v = b.create_var(name=name)
        return VarDesc(v)

    def has_var(self, name):
        return _text(name) in self._obj.vars

    def find_var(self, name):
        v = self._obj.vars.get(_text(name))
        return VarDesc(v) if v is not None else None

    def find_var_recursive(self, name):
        v = self._obj._find_var_recursive(_text(name))
        return VarDesc(v) if v is not None else None

    def has_var_recursive(self, name):
        return self._obj._find_var_recursive(_text(name)) is not None

    def all_vars(self):
        return [VarDesc(v) for v in self._obj.vars.values()]

    def _remove_var(self, name):
        self._obj._remove_var(_text(name))

    def _rename_var(self, old, new):
        self._obj._rename_var(_text(old), _text(new))

    # operators -----------------------------------------------------------------------------------
    def _new_op(self, index):
        """An op of no type yet, at `index`: the caller sets its type, slots and attributes (Paddle's
        BlockDesc.append_op; no default attributes until check_attrs)."""
        from .operator import Operator
        op = Operator(self._obj, "")
        self._obj.ops.insert(len(self._obj.ops) if index is None else index, op)
        self._obj.program._bump()
        return OpDesc(op)

    def append_op(self):
        return self._new_op(None)

    def _prepend_op(self):
        return self._new_op(0)

    def _insert_op(self, index):
        return self._new_op(index)

    def op(self, index):
        return OpDesc(self._obj.ops[index])

    def op_size(self):
        return len(self._obj.ops)

    def _remove_op(self, start, end):
        self._obj._remove_op(start, end)

    def serialize_to_string(self):
        b = self._obj
        body = _w.f_varint(1, b.idx) + _w.f_varint(2, b.parent_idx)
        body += b"".join(_w.f_bytes(3, _encode_var(v)) for v in b.vars.values())
        body += b"".join(_w.f_bytes(4, _encode_op(op, _attr_types())) for op in b.ops)
        return bytes(body)


def _attr_type(op_type, name, value):
    proto = _protos.get_proto(op_type)
    if proto is not None:
        for a in proto.attrs:
            if a.name == name:
                return a.type
    return _guess_type(value)


def _infer_by_slot_names(op, block):
    """Shape inference for an op that declares none: an output slot `<S>Out` (ParamOut, MomentOut, ...) is
    its input slot `<S>` (shape, dtype, LoD level), which is what Paddle's InferShape of every optimizer op
    says; other outputs stay as declared (their shapes are known when the op runs)."""
    for slot, names in op.outputs.items():
        src = op.inputs.get(slot[:-3]) if slot.endswith("Out") else None
        if not src or len(src) != len(names):
            continue
        for n, m in zip(names, src):
            v, s = block._var_recursive(n), block._var_recursive(m)
            v.shape, v.dtype, v.lod_level = s.shape, s.dtype, s.lod_level
    block.program._bump()


class OpDesc(_View):
    __slots__ = ()

    def type(self):
        return self._obj.type

    def set_type(self, op_type):
        self._obj.type = _text(op_type)
        self._obj._touch()

    def block(self):
        return BlockDesc(self._obj.block)

    # slots -----------------------------------------------------------------------------------------
    def input(self, name):
        return self._obj.input(name)

    def output(self, name):
        return self._obj.output(name)

    def input_names(self):
        return self._obj.input_names

    def output_names(self):
        return self._obj.output_names

    def input_arg_names(self):
        return self._obj.input_arg_names

    def output_arg_names(self):
        return self._obj.output_arg_names

    def set_input(self, name, args):
        self._obj.inputs[name] = [_text(a) for a in args]
        self._obj._touch()

    def set_output(self, name, args):
        self._obj.outputs[name] = [_text(a) for a in args]
        self._obj._touch()

    def _rename_input(self, old, new):
        self._obj._rename_input(old, new)

    def _rename_output(self, old, new):
        self._obj._rename_output(old, new)

    # attributes ------------------------------------------------------------------------------------
    def attr(self, name):
        return self._obj.attr(name)

    def has_attr(self, name):
        return self._obj.has_attr(name)

    def attr_names(self):
        return self._obj.attr_names

    def attr_type(self, name):
        return _attr_type(self._obj.type, name, self._obj.attr(name))

    def _set_attr(self, name, value):
        self._obj._set_attr(name, value)

    set_attr = _set_attr

    def remove_attr(self, name):
        self._obj.attrs.pop(name, None)
        self._obj._touch()

    def set_block_attr(self, name, block):
        self._obj._set_attr(name, block._obj if isinstance(block, BlockDesc) else block)

    def set_blocks_attr(self, name, blocks):
        self._obj._set_attr(name, [b._obj if isinstance(b, BlockDesc) else b for b in blocks])

    def _block_attr_id(self, name):
        return self._obj.attr(name).idx

    def _blocks_attr_ids(self, name):
        return [b.idx for b in self._obj.attr(name)]

    def check_attrs(self):
        """Fill in the attributes Paddle's checker defaults; raise for a required one that is missing."""
        op = self._obj
        proto = _protos.get_proto(op.type)
        if proto is None:
            raise ValueError('Operator "%s" has not been registered.' % op.type)
        for a in proto.attrs:
            if a.name in op.attrs and op.attrs[a.name] is not None:
                continue
            if a.required:
                raise ValueError("op %s: attribute '%s' is required" % (op.type, a.name))
            op.attrs[a.name] = a.default
        op._touch()

    def infer_var_type(self, block):
        """Output variable types follow from the op at run time here: nothing to do."""

    def infer_shape(self, block):
        """Set the output variables' shape, dtype and LoD level from the inputs (the op's infer_shape)."""
        op = self._obj
        d = _registry.find(op.type)
        b = block._obj if isinstance(block, BlockDesc) else block
        if d is None or d.infer_shape is None:
            _infer_by_slot_names(op, b)
            return
        ins = {slot: [b._var_recursive(n) for n in names] for slot, names in op.inputs.items()}
        metas = d.infer_shape(ins, op.attrs)
        for slot, meta in metas.items():
            names = op.outputs.get(slot, [])
            for n, m in zip(names, meta if isinstance(meta, (list, tuple)) else [meta]):
                v = b._var_recursive(n)
                v.shape = tuple(int(s) for s in m.shape)
                v.dtype = convert_dtype(m.dtype)
                v.lod_level = m.lod_level
        b.program._bump()

    def serialize_to_string(self):
        return _encode_op(self._obj, _attr_types())

    def copy_from(self, other):
        src = other._obj
        op = self._obj
        op.type = src.type
        op.inputs = copy.deepcopy(src.inputs)
        op.outputs = copy.deepcopy(src.outputs)
        op.attrs = dict(src.attrs)
        op._touch()


class VarDesc(_VarDescBase, _View):
    """A variable's desc (core.VarDesc keeps Paddle's VarType enum: core.VarDesc.VarType.FP32)."""
    __slots__ = ()

    def name(self):
        return self._obj.name

    def set_name(self, name):
        self._obj.block._rename_var(self._obj.name, _text(name))

    def type(self):
        return self._obj.type

    def set_type(self, t):
        self._obj.type = convert_dtype(t)
        self._touch()

    def shape(self):
        return list(self._obj.shape)

    def set_shape(self, shape):
        self._obj.shape = tuple(int(s) for s in shape)
        self._touch()

    def dtype(self):
        return self._obj.dtype

    def set_dtype(self, dtype):
        self._obj.dtype = convert_dtype(dtype)
        self._touch()

    def lod_level(self):
        return self._obj.lod_level

    def set_lod_level(self, level):
        self._obj.lod_level = int(level)
        self._touch()

    def persistable(self):
        return self._obj.persistable

    def set_persistable(self, value):
        self._obj.persistable = value

    def need_check_feed(self):
        return bool(self._obj.need_check_feed)

    def set_need_check_feed(self, value):
        self._obj.need_check_feed = bool(value)
        self._touch()

    # a READER variable describes several tensors
    def shapes(self):
        return [list(s) for s in getattr(self._obj, "_reader_shapes", [])]

    def set_shapes(self, shapes):
        self._obj._reader_shapes = [tuple(int(d) for d in s) for s in shapes]
        self._touch()

    def dtypes(self):
        return list(getattr(self._obj, "_reader_dtypes", []))

    def set_dtypes(self, dtypes):
        self._obj._reader_dtypes = [convert_dtype(d) for d in dtypes]
        self._touch()

    def lod_levels(self):
        return list(getattr(self._obj, "_reader_lod_levels", []))

    def set_lod_levels(self, levels):
        self._obj._reader_lod_levels = [int(x) for x in levels]
        self._touch()

    def serialize_to_string(self):
        return _encode_var(self._obj)

    def _touch(self):
        if self._obj.block is not None:
            self._obj.block.program._bump()


VarDesc.VarType = VarType
