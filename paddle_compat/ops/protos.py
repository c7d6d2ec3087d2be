"""Each op type's proto: its input and output slots (duplicable, dispensable, intermediate) and its attributes
with their types and defaults, as Paddle 1.8.5's op registry declares them, for the ops Paddle has; ops only
this package defines get a proto made from their declaration (ops/registry).

It answers `fluid.framework.OpProtoHolder` (Paddle's op tests build ops from it) and gives every recorded op
the attributes Paddle's attribute checker fills in (`use_mkldnn`, `op_device`, `x_num_col_dims`, ...), so
programs, their printouts and their ProgramDesc bytes carry what Paddle's do.

Paddle's protos are data recorded from Paddle 1.8.5 by tests/data/paddle18/make_op_protos.py into
ir/op_protos.json (names, flags, attribute types and defaults), which the IR's ProgramDesc writer reads too;
an op Paddle lacks states its attributes in its declaration (OpDef.attrs). Plain Python: no torch, nothing
from paddle_compat.fluid.
"""

import copy

from . import registry
from ..ir.proto_desc import AttrType, recorded_protos

__all__ = ["OpProto", "get_proto", "has_proto", "attr_defaults", "proto_types", "is_known_type", "grad_op_attrs",
           "AttrType", "infer_shape_of", "declared_attrs", "OpProtoHolder", "GENERATED_ATTRS"]


# The attributes Paddle's OpProtoAndCheckerMaker adds to every op, with their defaults.
GENERATED_ATTRS = (("op_role", AttrType.INT, 0x1000), ("op_role_var", AttrType.STRINGS, []),
                   ("op_namescope", AttrType.STRING, ""), ("op_callstack", AttrType.STRINGS, []),
                   ("op_device", AttrType.STRING, ""))

_DERIVED = {}


def _table():
    return recorded_protos()


class VarProto:
    """One input or output slot (framework_pb2.OpProto.Var's fields)."""
    __slots__ = ("name", "duplicable", "intermediate", "dispensable", "comment")

    def __init__(self, name, flags=""):
        self.name = name
        self.duplicable = "d" in flags
        self.intermediate = "i" in flags
        self.dispensable = "o" in flags
        self.comment = ""

    def __repr__(self):
        return "VarProto(%s%s)" % (self.name, "".join(
            ", " + k for k in ("duplicable", "intermediate", "dispensable") if getattr(self, k)))


class AttrProto:
    """One attribute (framework_pb2.OpProto.Attr's fields, and the default Paddle's checker fills in)."""
    __slots__ = ("name", "type", "generated", "comment", "required", "_default")

    def __init__(self, name, type, default):
        self.name = name
        self.type = type
        self.generated = False
        self.comment = ""
        self.required = isinstance(default, dict) and default.get("required", False)
        self._default = None if self.required else default

    @property
    def default(self):
        return copy.copy(self._default)

    def __repr__(self):
        return "AttrProto(%s, type=%d, %s)" % (self.name, self.type,
                                               "required" if self.required else "default=%r" % (self._default,))


class OpProto:
    """What Paddle's framework_pb2.OpProto offers of one op type: .type, .inputs, .outputs, .attrs."""

    def __init__(self, type, inputs, outputs, attrs, comment=""):
        self.type = type
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.comment = comment

    def __repr__(self):
        return "OpProto(%s: inputs=%s, outputs=%s, attrs=%s)" % (
            self.type, [v.name for v in self.inputs], [v.name for v in self.outputs], [a.name for a in self.attrs])


def _from_record(op_type, rec):
    return OpProto(op_type, [VarProto(n, f) for n, f in rec["inputs"]], [VarProto(n, f) for n, f in rec["outputs"]],
                   [AttrProto(n, t, d) for n, t, d in rec["attrs"]])


def _from_declaration(d):
    """A proto for an op type Paddle 1.8.5's CPU registry lacks, from its declaration: slots ("X*" is
    duplicable), its declared attributes and the generated ones."""
    ins = [VarProto(s.rstrip("*"), "d" if s.endswith("*") else "") for s in d.inputs]
    outs = [VarProto(s.rstrip("*"), "d" if s.endswith("*") else "") for s in d.outputs]
    return OpProto(d.type, ins, outs, [AttrProto(n, t, v) for n, t, v in declared_attrs(d.type) + GENERATED_ATTRS])


def declared_attrs(op_type):
    """((name, AttrType, default), ...) an op type Paddle lacks declares (OpDef.attrs); () for Paddle's."""
    d = registry.find(op_type)
    return tuple(d.attrs) if d is not None and op_type not in _table() else ()


def has_proto(op_type):
    """Whether Paddle 1.8.5's registry declares op_type."""
    return op_type in _table()


def proto_types():
    return sorted(_table())


def get_proto(op_type):
    """The OpProto of op_type, or None when neither Paddle 1.8.5 nor this package declares it."""
    p = _DERIVED.get(op_type)
    if p is not None:
        return p
    rec = _table().get(op_type)
    if rec is not None:
        p = _from_record(op_type, rec)
    else:
        d = registry.find(op_type)
        if d is None:
            return None
        p = _from_declaration(d)
    _DERIVED[op_type] = p
    return p


_DEFAULTS = {}


def attr_defaults(op_type):
    """[(name, default)] of op_type's attributes that have one, in registry order (shared: copy lists before
    changing them)."""
    got = _DEFAULTS.get(op_type)
    if got is None:
        rec = _table().get(op_type)
        if rec is None:
            got = [(n, v) for n, _, v in declared_attrs(op_type) + GENERATED_ATTRS]
        else:
            got = [(n, v) for n, _, v in rec["attrs"] if not (isinstance(v, dict) and v.get("required"))]
        _DEFAULTS[op_type] = got
    return got


def grad_op_attrs(op_type):
    """The attribute names Paddle's grad maker gives op_type's `<type>_grad` op when it does not copy every
    attribute of the forward op (mean_grad carries none), else None."""
    rec = _table().get(op_type)
    return rec.get("grad_attrs") if rec is not None else None


def is_known_type(op_type):
    """Whether an op of this type may be recorded: Paddle declares it, this package defines it, or it is a
    gradient op (append_backward writes `<type>_grad` ops, which have no proto in Paddle either)."""
    return op_type in _table() or registry.find(op_type) is not None or op_type.endswith("_grad") or \
        op_type == "cross_entropy_grad2"     # (Paddle's one grad type named otherwise)


def infer_shape_of(op_type):
    """op_type's shape inference (infer_shape(ins, attrs) -> {slot: OutMeta}), or None when it declares none."""
    d = registry.find(op_type)
    return d.infer_shape if d is not None else None


class OpProtoHolder:
    """Every op type's proto (its slots and attributes; see paddle_compat/ops/protos.py), as Paddle's op tests
    read them: OpProtoHolder.instance().get_op_proto("mul").inputs[0].name."""

    @classmethod
    def instance(cls):
        if not hasattr(cls, "_instance"):
            cls._instance = cls()
        return cls._instance

    def __init__(self):
        if hasattr(self.__class__, "_instance"):
            raise AssertionError("Please use `instance()` to get OpProtoHolder object!")
        self.op_proto_map = {t: get_proto(t) for t in proto_types()}

    def get_op_proto(self, type):
        proto = self.op_proto_map.get(type) or get_proto(type)
        if proto is None:
            raise ValueError("Operator \"%s\" has not been registered." % type)
        return proto

    def update_op_proto(self):
        """Protos of op types defined since (load_op_library's custom ops are not supported here)."""

    @staticmethod
    def generated_op_attr_names():
        return {name for name, _, _ in GENERATED_ATTRS}
