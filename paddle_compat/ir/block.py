"""Block: ordered ops over named variables (a program's global block, or a sub-block of a control-flow op).
BlockDesc: Paddle's desc-level view of a Block (`block.desc`)."""

import collections
import copy

from . import op_info, proto_wire as w, recording
from .operator import (OP_CALLSTACK_KEY, OP_NAMESCOPE_KEY, OP_ROLE_KEY, OP_ROLE_VAR_KEY, Operator,
                       creation_callstack, user_callsite)
from .proto_desc import attr_types, encode_op, encode_var
from .variable import Parameter, Variable
from .verifier import apply_infer_shape
from .views import View, text

__all__ = ["Block", "BlockDesc"]


class Block:
    def __init__(self, program, idx, parent_idx=-1):
        self.program = program
        self.idx = idx
        self.parent_idx = parent_idx
        self.forward_block_idx = -1
        self.vars = collections.OrderedDict()
        self.ops = []

    @property
    def parent(self):
        return self.program.block(self.parent_idx) if self.parent_idx >= 0 else None

    @property
    def backward_block_idx(self):
        """The block holding this block's gradient ops (append_backward of a loss recorded here), or -1."""
        for b in self.program.blocks:
            if b.forward_block_idx == self.idx:
                return b.idx
        return -1

    def _set_forward_block_idx(self, idx):
        self.forward_block_idx = idx

    # variables ---------------------------------------------------------------------------------
    def var(self, name):
        if not isinstance(name, str):
            raise TypeError("var name must be str, got %r" % (name,))
        v = self.vars.get(name)
        if v is None:
            raise ValueError("var %s not in this block" % name)
        return v

    def has_var(self, name):
        return name in self.vars

    def _find_var_recursive(self, name):
        """This block, then its ancestors; a backward block (see backward_block_idx) then also sees its
        forward block's variables, as Paddle's lookup does: its grad ops read what the forward ops made."""
        b = self
        fwd = -1
        while b is not None:
            if name in b.vars:
                return b.vars[name]
            if fwd < 0:
                fwd = b.forward_block_idx
            b = b.parent
        return self.program.block(fwd)._find_var_recursive(name) if fwd >= 0 else None

    def _var_recursive(self, name):
        v = self._find_var_recursive(name)
        if v is None:
            raise ValueError("var %s is not in block %d or its ancestors" % (name, self.idx))
        return v

    def create_var(self, **kwargs):
        if recording.eager_active():      # inside fluid.dygraph.guard: a VarBase (Paddle's _varbase_creator)
            return recording.eager_tracer.create_var(**kwargs)
        name = kwargs.get("name")
        if name is not None and name in self.vars:
            # Paddle returns the existing variable (create_var is idempotent by name), but refuses a
            # different shape for it
            old, shape = self.vars[name], kwargs.get("shape")
            if shape is not None and old.shape and tuple(int(d) for d in shape) != tuple(old.shape):
                raise ValueError("Variable %s has been created before with shape %s; the new shape %s does not "
                                 "match" % (name, tuple(old.shape), tuple(shape)))
            return old
        v = Variable(self, **kwargs)
        self.vars[v.name] = v
        self.program._bump()
        return v

    def create_parameter(self, **kwargs):
        """Parameters live in the global block (Paddle's rule)."""
        gb = self.program.global_block()
        name = kwargs.get("name")
        if name in gb.vars and isinstance(gb.vars[name], Parameter):
            return gb.vars[name]
        initializer = kwargs.pop("initializer", None)
        p = Parameter(gb, **kwargs)
        gb.vars[p.name] = p
        self.program._bump()
        if initializer is not None:
            initializer(p, gb)
        return p

    def _remove_var(self, name):
        self.vars.pop(name, None)
        self.program._bump()

    remove_var = _remove_var

    def _rename_var(self, old, new):
        v = self.vars.pop(old)
        v.name = new
        self.vars[new] = v
        for op in self.ops:
            op._rename_input(old, new)
            op._rename_output(old, new)
        self.program._bump()
        return v

    def all_parameters(self):
        return [v for v in self.vars.values() if isinstance(v, Parameter)]

    def iter_parameters(self):
        return iter(self.all_parameters())

    # operators ---------------------------------------------------------------------------------
    def _make_op(self, type, inputs, outputs, attrs, stop_gradient=False):
        if type is None:
            raise ValueError("`type` to initialized an Operator can not be None.")
        if not op_info.is_known_type(type):
            raise ValueError("Operator \"%s\" has not been registered." % type)
        attrs = dict(attrs or {})
        prog = self.program
        attrs.setdefault(OP_ROLE_KEY, prog._current_role)
        if prog._op_role_var and OP_ROLE_VAR_KEY not in attrs:
            attrs[OP_ROLE_VAR_KEY] = list(prog._op_role_var)
        # Paddle's full name scope: "/" outside any name_scope
        attrs.setdefault(OP_NAMESCOPE_KEY, recording.current_name_scope().path)
        attrs.setdefault(OP_CALLSTACK_KEY, creation_callstack())
        device = recording.current_device()
        if device is not None:
            attrs[recording.OP_DEVICE_KEY] = device
        # the defaults Paddle's attribute checker fills in (an attribute given as None takes its default too)
        for name, default in op_info.attr_defaults(type):
            if attrs.get(name) is None:
                attrs[name] = copy.copy(default)
        op = Operator(self, type, inputs, outputs, attrs, callsite=user_callsite())
        # Paddle points each output Variable given to the op at it (`var.op`)
        for args in (outputs or {}).values():
            for a in (args if isinstance(args, (list, tuple)) else [args]):
                if isinstance(a, Variable):
                    a.op = op
        # as Paddle 1.8's Operator ran InferShape: unset output shapes are filled, contradicting ones refused
        apply_infer_shape(self, op)
        return op

    def append_op(self, type=None, inputs=None, outputs=None, attrs=None, stop_gradient=False, **kw):
        if recording.eager_active():      # inside fluid.dygraph.guard: run the op now (Paddle's tracer)
            if type is None:
                raise ValueError("`type` to initialized an Operator can not be None.")
            return recording.eager_tracer.trace_op(type, inputs, outputs, attrs, stop_gradient)
        op = self._make_op(type, inputs, outputs, attrs)
        self.ops.append(op)
        self.program._bump()
        return op

    def _insert_op(self, index, type=None, inputs=None, outputs=None, attrs=None, **kw):
        op = self._make_op(type, inputs, outputs, attrs)
        self.ops.insert(index, op)
        self.program._bump()
        return op

    def _prepend_op(self, type=None, inputs=None, outputs=None, attrs=None, **kw):
        return self._insert_op(0, type, inputs, outputs, attrs)

    def _remove_op(self, index, end=None):
        if end is None:
            del self.ops[index]
        else:
            del self.ops[index:end]
        self.program._bump()

    insert_op = _insert_op
    prepend_op = _prepend_op
    remove_op = _remove_op

    def _sync_with_cpp(self):
        """No-op: there is no C++ desc to keep in sync."""

    @property
    def desc(self):
        """Paddle's `block.desc` (fluid.core.BlockDesc): a view of this block."""
        return BlockDesc(self)

    # printing ----------------------------------------------------------------------------------
    def to_string(self, throw_on_error=False, with_details=False):
        lines = ["{ // block %d%s" % (self.idx, (" (parent %d)" % self.parent_idx) if self.parent_idx >= 0 else "")]
        for v in self.vars.values():
            lines.append("    " + v.to_string(throw_on_error, with_details))
        if self.vars:
            lines.append("")
        for op in self.ops:
            lines.append("    " + op.to_string())
        lines.append("}")
        return "\n".join(lines)

    __str__ = to_string


class BlockDesc(View):
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
        name = text(name)
        b = self._obj
        v = b.vars.get(name)
        if v is None:
            v = b.create_var(name=name)
        return v.desc

    def has_var(self, name):
        return text(name) in self._obj.vars

    def find_var(self, name):
        v = self._obj.vars.get(text(name))
        return v.desc if v is not None else None

    def find_var_recursive(self, name):
        v = self._obj._find_var_recursive(text(name))
        return v.desc if v is not None else None

    def has_var_recursive(self, name):
        return self._obj._find_var_recursive(text(name)) is not None

    def all_vars(self):
        return [v.desc for v in self._obj.vars.values()]

    def _remove_var(self, name):
        self._obj._remove_var(text(name))

    def _rename_var(self, old, new):
        self._obj._rename_var(text(old), text(new))

    # operators -----------------------------------------------------------------------------------
    def _new_op(self, index):
        """An op of no type yet, at `index`: the caller sets its type, slots and attributes (Paddle's
        BlockDesc.append_op; no default attributes until check_attrs)."""
        op = Operator(self._obj, "")
        self._obj.ops.insert(len(self._obj.ops) if index is None else index, op)
        self._obj.program._bump()
        return op.desc

    def append_op(self):
        return self._new_op(None)

    def _prepend_op(self):
        return self._new_op(0)

    def _insert_op(self, index):
        return self._new_op(index)

    def op(self, index):
        return self._obj.ops[index].desc

    def op_size(self):
        return len(self._obj.ops)

    def _remove_op(self, start, end):
        self._obj._remove_op(start, end)

    def serialize_to_string(self):
        b = self._obj
        body = w.f_varint(1, b.idx) + w.f_varint(2, b.parent_idx)
        body += b"".join(w.f_bytes(3, encode_var(v)) for v in b.vars.values())
        body += b"".join(w.f_bytes(4, encode_op(op, attr_types())) for op in b.ops)
        return bytes(body)
