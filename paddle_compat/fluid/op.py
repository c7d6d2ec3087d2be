"""fluid.op.Operator: build one op and run it on a Scope, the way Paddle's op unit tests drive operators.

    op = Operator("sum", X=["x0", "x1"], Out="out")
    op.run(scope, place)

As in Paddle, the op's proto (paddle_compat/ops/protos.py) tells its input slots from its output slots.  For an
op type without one, the rule is the test's own setup: a slot whose variables all hold a value in the scope
when run() is called is an input; the others are outputs.
"""

import numpy as np

from ..ir import Program, SelectedRows, VarType, program_guard
from ..ops import protos as _protos
from .executor import Executor
from .proto import framework_pb2

__all__ = ["Operator", "OpDescCreationMethod", "get_all_op_protos"]


def _names(v):
    return [v] if isinstance(v, str) else list(v)


def _is_slot(key, value):
    # Paddle's slot names are CamelCase ("X", "Out", "Param"); attrs are snake_case ("scale", "use_mkldnn")
    return key[:1].isupper() and (isinstance(value, str) or
                                  (isinstance(value, (list, tuple)) and value and
                                   all(isinstance(x, str) for x in value)))


def _proto(op_type):
    p = _protos.get_proto(op_type)
    if p is None:
        raise ValueError('Operator "%s" has not been registered.' % op_type)
    return p


def _var_meta(var):
    """The type, shape, dtype and LoD level of a scope variable's value: how the one-op program declares it."""
    value = var.value
    if isinstance(value, SelectedRows):
        arr = np.array(value.get_tensor())
        return dict(type=VarType.SELECTED_ROWS, shape=[value.height()] + list(arr.shape[1:]), dtype=str(arr.dtype))
    t = var.get_tensor()
    return dict(type=VarType.LOD_TENSOR, shape=t.shape(), dtype=t._dtype(), lod_level=len(t.lod()))


def _declare_outputs(op, block, inputs):
    """Output variables as the op's shape inference declares them (Paddle infers them when the op is
    built); without one, an output has the deepest LoD level of the inputs (it shares their LoD)."""
    try:
        op.desc.infer_shape(block)
        return
    except Exception:     # no shape inference here, or one that needs what this op was not given
        pass
    level = max([block.var(n).lod_level for names in inputs.values() for n in names] or [0])
    for n in op.output_arg_names:
        block.var(n).lod_level = level


class Operator:
    def __init__(self, type, **kwargs):
        if not isinstance(type, str) or not type:
            raise ValueError("Operator needs an op type name, got %r" % (type,))
        self._type = type
        proto = _protos.get_proto(type)
        if proto is not None:
            slots = {v.name for v in proto.inputs} | {v.name for v in proto.outputs}
            self._slots = {k: _names(v) for k, v in kwargs.items() if k in slots and v is not None}
            for v in list(proto.inputs) + list(proto.outputs):
                if v.name in self._slots and not v.duplicable and len(self._slots[v.name]) > 1:
                    raise ValueError("Operator %s: slot %s takes one variable, got %d"
                                     % (type, v.name, len(self._slots[v.name])))
        else:
            self._slots = {k: _names(v) for k, v in kwargs.items() if _is_slot(k, v)}
        self._proto = proto
        self._attrs = {k: v for k, v in kwargs.items() if k not in self._slots and v is not None}

    def type(self):
        return self._type

    def __str__(self):
        """What Paddle's C++ DebugString says of the op: every slot of its proto, by name, with its variables."""
        if self._proto is not None:
            ins = sorted(v.name for v in self._proto.inputs)
            outs = sorted(v.name for v in self._proto.outputs)
        else:
            ins, outs = sorted(self._slots), []

        def show(names):
            return ", ".join("%s[%s]" % (n, ", ".join(self._slots.get(n, []))) for n in names)
        return "Op(%s), inputs:{%s}, outputs:{%s}." % (self._type, show(ins), show(outs))

    def attr(self, name):
        return self._attrs[name]

    def _split_slots(self, scope):
        if self._proto is not None:
            ins = {v.name for v in self._proto.inputs}
            return ({k: v for k, v in self._slots.items() if k in ins},
                    {k: v for k, v in self._slots.items() if k not in ins})

        def has_value(n):
            v = scope.find_var(n)
            if v is None:
                return False
            try:
                return np.array(v.get_tensor()).size > 0 or v.get_tensor().shape() != []
            except Exception:
                return False

        inputs = {k: v for k, v in self._slots.items() if all(has_value(n) for n in v)}
        outputs = {k: v for k, v in self._slots.items() if k not in inputs}
        if not outputs:
            raise ValueError("Operator(%r).run: every slot (%s) already holds a value in the scope, so none "
                             "is an output; create outputs with scope.var(name) only"
                             % (self._type, ", ".join(self._slots)))
        return inputs, outputs

    def run(self, scope, place):


        inputs, outputs = self._split_slots(scope)
        prog, startup = Program(), Program()
        with program_guard(prog, startup):
            block = prog.global_block()
            for slot_vars in inputs.values():
                for n in slot_vars:
                    var = scope.find_var(n)
                    if var is None:
                        raise ValueError("Operator(%r).run: input variable %s is not in the scope" % (self._type, n))
                    block.create_var(name=n, persistable=True, **_var_meta(var))
            for slot_vars in outputs.values():
                for n in slot_vars:
                    if not block.has_var(n):
                        block.create_var(name=n, dtype="float32", persistable=True)
            op = block.append_op(type=self._type, inputs=inputs, outputs=outputs, attrs=dict(self._attrs))
            _declare_outputs(op, block, inputs)
        Executor(place).run(prog, scope=scope)

    # Paddle's OperatorFactory queries (its op tests read an op type's slots and attributes through them)
    @staticmethod
    def types():
        return _protos.proto_types()

    @staticmethod
    def get_op_info(op_type):
        return _proto(op_type)

    @staticmethod
    def get_op_input_names(op_type):
        return [v.name for v in _proto(op_type).inputs]

    @staticmethod
    def get_op_inputs(op_type):
        return [(v.name, v.duplicable) for v in _proto(op_type).inputs]

    @staticmethod
    def get_op_output_names(op_type):
        return [v.name for v in _proto(op_type).outputs]

    @staticmethod
    def get_op_outputs(op_type):
        return [(v.name, v.duplicable) for v in _proto(op_type).outputs]

    @staticmethod
    def get_op_attr_names(op_type):
        return [a.name for a in _proto(op_type).attrs]


def _as_pb2(proto):
    """A framework_pb2.OpProto holding an ops/protos OpProto's slots and attributes."""
    m = framework_pb2.OpProto(type=proto.type, comment=proto.comment or "")
    for slots, vars_ in ((m.inputs, proto.inputs), (m.outputs, proto.outputs)):
        for v in vars_:
            slots.add(name=v.name, comment=v.comment or "", duplicable=v.duplicable, intermediate=v.intermediate,
                      dispensable=v.dispensable)
    for a in proto.attrs:
        m.attrs.add(name=a.name, type=int(a.type), comment=a.comment or "", generated=a.generated)
    return m


def get_all_op_protos():
    """Every registered op type's proto, as framework_pb2.OpProto messages."""
    return [_as_pb2(_protos.get_proto(t)) for t in _protos.proto_types()]


# framework_pb2.OpDesc.Attr's field for a value of each attribute type (scalars set, lists extended)
_ATTR_FIELD = {framework_pb2.INT: "i", framework_pb2.FLOAT: "f", framework_pb2.LONG: "l",
               framework_pb2.STRING: "s", framework_pb2.BOOLEAN: "b", framework_pb2.INTS: "ints",
               framework_pb2.FLOATS: "floats", framework_pb2.STRINGS: "strings", framework_pb2.BOOLEANS: "bools",
               framework_pb2.LONGS: "longs"}


class OpDescCreationMethod:
    """OpDescCreationMethod(op_proto)(**slots_and_attrs) -> a framework_pb2.OpDesc: every slot of the proto
    (a name or a list of names; an unnamed slot empty), then the type, then the attributes given, in the
    proto's order (generated ones left out)."""

    def __init__(self, op_proto):
        if not isinstance(op_proto, framework_pb2.OpProto):
            raise TypeError("Type of op_proto should be OpProto")
        self._proto = op_proto

    def __call__(self, *args, **kwargs):
        if args:
            raise ValueError("Only keyword arguments are supported.")
        desc = framework_pb2.OpDesc()
        for kind, slots, target in (("Input", self._proto.inputs, desc.inputs),
                                    ("Output", self._proto.outputs, desc.outputs)):
            for slot in slots:
                names = kwargs.get(slot.name, [])
                names = [names] if isinstance(names, str) else list(names)
                if not slot.duplicable and len(names) > 1:
                    raise ValueError("%s %s expects only one %s, but %d are given."
                                     % (kind, slot.name, kind.lower(), len(names)))
                target.add(parameter=slot.name, arguments=names)
        desc.type = self._proto.type
        for a in self._proto.attrs:
            value = kwargs.get(a.name)
            if a.generated or value is None:
                continue
            field = _ATTR_FIELD.get(a.type)
            if field is None:
                raise NotImplementedError("A not supported attribute type: %s." % a.type)
            if isinstance(value, np.ndarray):
                value = value.tolist()
            attr = desc.attrs.add(name=a.name, type=a.type)
            if field in ("ints", "floats", "strings", "bools", "longs"):
                getattr(attr, field).extend(value)
            else:
                setattr(attr, field, value)
        return desc
