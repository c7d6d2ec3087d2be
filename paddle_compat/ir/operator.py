"""Operator: one node of the recorded graph (type, named input/output slots of variable names, attrs).
OpDesc: Paddle's desc-level view of an Operator (`op.desc`)."""

import collections
import copy
import linecache
import os
import sys

from . import op_info
from .dtypes import convert_dtype
from .proto_desc import attr_types, encode_op, guess_attr_type
from .roles import OP_CALLSTACK_KEY, OP_NAMESCOPE_KEY, OP_ROLE_KEY, OP_ROLE_VAR_KEY, OpRole  # noqa: F401
from .views import View, text

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_callsite():
    """'file:line' of the first frame outside paddle_compat: where the user built this op."""
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PKG_DIR) and not fn.startswith("<"):
            return "%s:%d" % (fn, f.f_lineno)
        f = f.f_back
    return "<unknown>"


_FRAME_TEXT = {}     # (code, line) -> its traceback line: a program's ops come from a few call sites


def creation_callstack():
    """Paddle's op_callstack: the stack where the op was built, innermost frame first, each frame formatted
    as Python's traceback module does (Paddle stores list(reversed(traceback.format_stack()))[1:]; this walk
    gives the same lines, each formatted once per call site)."""
    f = sys._getframe(2)
    out = []
    if len(_FRAME_TEXT) > 100000:
        _FRAME_TEXT.clear()
    while f is not None:
        co = f.f_code
        key = (co, f.f_lineno)
        text = _FRAME_TEXT.get(key)
        if text is None:
            line = linecache.getline(co.co_filename, f.f_lineno).strip()
            text = _FRAME_TEXT[key] = '  File "%s", line %d, in %s\n%s' % (
                co.co_filename, f.f_lineno, co.co_name, "    %s\n" % line if line else "")
        out.append(text)
        f = f.f_back
    return out


def _names(args):
    """Normalise an input/output slot value (Variable, name, list of either) into a list of names."""
    if args is None:
        return []
    if not isinstance(args, (list, tuple)):
        args = [args]
    out = []
    for a in args:
        if a is None:
            continue
        if isinstance(a, str):
            out.append(a)
        elif hasattr(a, "name"):
            out.append(a.name)
        else:
            raise TypeError("op argument must be a Variable or a variable name, got %r" % (a,))
    return out


class _Abbrev(str):
    def __repr__(self):
        return str(self)


def _attr_key(v):
    """A block-valued attribute compares by block index (a cloned program's op holds the clone's blocks)."""
    if hasattr(v, "ops") and hasattr(v, "idx"):
        return ("__block__", v.idx)
    if isinstance(v, (list, tuple)) and v and hasattr(v[0], "ops") and hasattr(v[0], "idx"):
        return [("__block__", b.idx) for b in v]
    return v


class Attrs(dict):
    """An op's attributes. Two are equal when they hold the same names and values, sub-blocks compared by
    index, as Paddle compares the attributes of two OpDescs (a program and its clone: equal)."""
    __slots__ = ()

    def __eq__(self, other):
        if not isinstance(other, dict):
            return NotImplemented
        if self.keys() != other.keys():
            return False
        for k, v in self.items():
            a, b = _attr_key(v), _attr_key(other[k])
            try:
                same = a == b
                same = bool(same.all()) if hasattr(same, "all") else bool(same)
            except ValueError:      # numpy arrays of different shapes
                same = False
            if not same:
                return False
        return True

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None


class Operator:
    def __init__(self, block, type, inputs=None, outputs=None, attrs=None, callsite=None):
        self.block = block
        self.type = type
        self.inputs = collections.OrderedDict((k, _names(v)) for k, v in (inputs or {}).items())
        self.outputs = collections.OrderedDict((k, _names(v)) for k, v in (outputs or {}).items())
        self.attrs = attrs
        self.callsite = callsite

    @property
    def attrs(self):
        return self._attrs

    @attrs.setter
    def attrs(self, value):
        self._attrs = Attrs(value or {})

    # Paddle's Operator API -------------------------------------------------------------
    def input(self, name):
        return list(self.inputs.get(name, []))

    def output(self, name):
        return list(self.outputs.get(name, []))

    @property
    def input_names(self):
        return list(self.inputs.keys())

    @property
    def output_names(self):
        return list(self.outputs.keys())

    @property
    def input_arg_names(self):
        return [n for v in self.inputs.values() for n in v]

    @property
    def output_arg_names(self):
        return [n for v in self.outputs.values() for n in v]

    def attr(self, name):
        if name not in self.attrs:
            raise ValueError("op '%s' has no attribute '%s'" % (self.type, name))
        return self.attrs[name]

    def has_attr(self, name):
        return name in self.attrs

    @property
    def attr_names(self):
        return list(self.attrs.keys())

    def attr_type(self, name):
        """The attribute's framework.proto AttrType (fluid.core.AttrType): Paddle's declared type, else the
        type its value is written with."""
        return _attr_type(self.type, name, self.attr(name))

    @property
    def desc(self):
        """Paddle's `op.desc` (fluid.core.OpDesc): a view of this op."""
        return OpDesc(self)

    def all_attrs(self):
        return dict(self.attrs)

    def _set_attr(self, name, val):
        self.attrs[name] = val
        self._touch()

    set_attr = _set_attr

    def _rename_input(self, old, new):
        for k, v in self.inputs.items():
            self.inputs[k] = [new if n == old else n for n in v]
        self._touch()

    def _rename_output(self, old, new):
        for k, v in self.outputs.items():
            self.outputs[k] = [new if n == old else n for n in v]
        self._touch()

    def _touch(self):
        if self.block is not None:
            self.block.program._bump()

    def _is_optimize_op(self):
        return bool(self.attrs.get(OP_ROLE_KEY, 0) & OpRole.Optimize)

    def _is_backward_op(self):
        return bool(self.attrs.get(OP_ROLE_KEY, 0) & OpRole.Backward)

    @property
    def idx(self):
        for i, op in enumerate(self.block.ops):
            if op is self:
                return i
        raise ValueError("operator is not in its block")

    def copy_to(self, block):
        """A copy of this op in `block`; block-valued attrs (sub-blocks) point at the blocks of the same index
        in `block`'s program, so a whole program is copied by copying its blocks, then their ops."""
        op = Operator(block, self.type, self.inputs, self.outputs, self.attrs, self.callsite)
        blocks = block.program.blocks if block is not None else None
        for k, val in list(op.attrs.items()):
            if hasattr(val, "ops") and hasattr(val, "idx"):
                op.attrs[k] = blocks[val.idx]
            elif isinstance(val, (list, tuple)) and val and hasattr(val[0], "ops") and hasattr(val[0], "idx"):
                op.attrs[k] = [blocks[b.idx] for b in val]
        return op

    # printing ----------------------------------------------------------------------------
    def to_string(self, throw_on_error=False):
        outs = ", ".join("%s=%s" % (k, v) for k, v in self.outputs.items())
        ins = ", ".join("%s=%s" % (k, v) for k, v in self.inputs.items())
        shown = []
        for k in sorted(self.attrs):
            if k in (OP_CALLSTACK_KEY,):
                continue
            v = self.attrs[k]
            if hasattr(v, "idx") and hasattr(v, "ops"):
                v = "block[%d]" % v.idx
            elif isinstance(v, (list, tuple)) and v and hasattr(v[0], "ops"):
                v = ["block[%d]" % b.idx for b in v]
            elif hasattr(v, "dtype") and hasattr(v, "shape") or isinstance(v, (list, tuple)) and len(v) > 16:
                v = _Abbrev("<%d values>" % len(v))
            shown.append("%s = %r" % (k, v))
        return "{%s} = %s(inputs={%s}%s)" % (outs, self.type, ins, (", " + ", ".join(shown)) if shown else "")

    __str__ = to_string

    def __repr__(self):
        return "<Operator %s>" % self.type


def _attr_type(op_type, name, value):
    proto = op_info.get_proto(op_type)
    if proto is not None:
        for a in proto.attrs:
            if a.name == name:
                return a.type
    return guess_attr_type(value)


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


class OpDesc(View):
    __slots__ = ()

    def type(self):
        return self._obj.type

    def set_type(self, op_type):
        self._obj.type = text(op_type)
        self._obj._touch()

    def block(self):
        return self._obj.block.desc

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
        self._obj.inputs[name] = [text(a) for a in args]
        self._obj._touch()

    def set_output(self, name, args):
        self._obj.outputs[name] = [text(a) for a in args]
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
        self._obj._set_attr(name, block._obj if isinstance(block, View) else block)

    def set_blocks_attr(self, name, blocks):
        self._obj._set_attr(name, [b._obj if isinstance(b, View) else b for b in blocks])

    def _block_attr_id(self, name):
        return self._obj.attr(name).idx

    def _blocks_attr_ids(self, name):
        return [b.idx for b in self._obj.attr(name)]

    def check_attrs(self):
        """Fill in the attributes Paddle's checker defaults; raise for a required one that is missing."""
        op = self._obj
        proto = op_info.get_proto(op.type)
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
        infer_shape = op_info.infer_shape_of(op.type)
        b = block._obj if isinstance(block, View) else block
        if infer_shape is None:
            _infer_by_slot_names(op, b)
            return
        ins = {slot: [b._var_recursive(n) for n in names] for slot, names in op.inputs.items()}
        metas = infer_shape(ins, op.attrs)
        for slot, meta in metas.items():
            names = op.outputs.get(slot, [])
            for n, m in zip(names, meta if isinstance(meta, (list, tuple)) else [meta]):
                v = b._var_recursive(n)
                v.shape = tuple(int(s) for s in m.shape)
                v.dtype = convert_dtype(m.dtype)
                v.lod_level = m.lod_level
        b.program._bump()

    def serialize_to_string(self):
        return encode_op(self._obj, attr_types())

    def copy_from(self, other):
        src = other._obj
        op = self._obj
        op.type = src.type
        op.inputs = copy.deepcopy(src.inputs)
        op.outputs = copy.deepcopy(src.outputs)
        op.attrs = dict(src.attrs)
        op._touch()
