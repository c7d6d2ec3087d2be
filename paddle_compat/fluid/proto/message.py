"""Protocol-buffer message classes in pure Python, for Paddle's *_pb2 modules (framework_pb2, profiler_pb2,
trainer_desc_pb2, data_feed_pb2): a message class lists its fields, and its objects behave as the generated
proto2 classes do for what Fluid code uses of them -- attribute access with defaults, `repeated.add()` /
`.extend()`, HasField / ClearField / ListFields, equality, IsInitialized, SerializeToString /
ParseFromString / FromString (the wire format by ir/proto_wire, no protobuf runtime).  Parsing builds plain
values only: bytes cannot make it run anything.

    class Var(Message):
        FIELDS = (Field("parameter", 1, REQUIRED, STRING), Field("arguments", 2, REPEATED, STRING))
"""

import struct

from ...ir import proto_wire as w

__all__ = ["Message", "Field", "Enum", "EncodeError", "DecodeError", "OPTIONAL", "REQUIRED", "REPEATED",
           "FLOAT", "DOUBLE", "INT64", "UINT64", "INT32", "UINT32", "BOOL", "STRING", "BYTES", "MESSAGE", "ENUM"]

OPTIONAL, REQUIRED, REPEATED = 1, 2, 3
FLOAT, DOUBLE, INT64, UINT64, INT32, UINT32, BOOL, STRING, BYTES, MESSAGE, ENUM = (
    "float", "double", "int64", "uint64", "int32", "uint32", "bool", "string", "bytes", "message", "enum")
_INTS = (INT64, UINT64, INT32, UINT32, ENUM)
_ZERO = {FLOAT: 0.0, DOUBLE: 0.0, BOOL: False, STRING: "", BYTES: b""}


class EncodeError(ValueError):
    """A message with a required field unset was serialized."""


class DecodeError(w.WireError):
    """The bytes are not this message."""


class Enum:
    """A proto enum: its values as attributes, Name(number) and Value(name) (the generated EnumTypeWrapper)."""

    def __init__(self, name, values):
        self._name = name
        self._values = list(values)
        for n, v in self._values:
            setattr(self, n, v)

    def Name(self, number):       # noqa: N802  (protobuf's names)
        for n, v in self._values:
            if v == number:
                return n
        raise ValueError("Enum %s has no name defined for value %r" % (self._name, number))

    def Value(self, name):        # noqa: N802
        for n, v in self._values:
            if n == name:
                return v
        raise ValueError("Enum %s has no value defined for name %r" % (self._name, name))

    def keys(self):
        return [n for n, _ in self._values]

    def values(self):
        return [v for _, v in self._values]

    def items(self):
        return list(self._values)


class Field:
    """One field: name, number, label (OPTIONAL/REQUIRED/REPEATED), kind, default; `message` is the class of
    a MESSAGE field (a class, or a function returning it for classes defined later)."""

    def __init__(self, name, number, label, kind, default=None, message=None, enum=None):
        self.name, self.number, self.label, self.kind = name, number, label, kind
        self._default, self._message, self.enum = default, message, enum

    @property
    def message(self):
        m = self._message
        return m if isinstance(m, type) else m()

    @property
    def default(self):
        if self._default is not None:
            return self._default
        return 0 if self.kind in _INTS else _ZERO[self.kind]

    def check(self, value):
        """value as stored (a float32 field keeps what float32 holds, as the C++ implementation does)."""
        k = self.kind
        if k in _INTS:
            if isinstance(value, bool) or not isinstance(value, int):
                if not (hasattr(value, "__index__") and not isinstance(value, float)):
                    raise TypeError("%r has type %s, but expected one of: int" % (value, type(value).__name__))
            return int(value)
        if k == BOOL:
            if not isinstance(value, (bool, int)) and not hasattr(value, "__index__"):
                raise TypeError("%r has type %s, but expected one of: bool, int" % (value, type(value).__name__))
            return bool(value)
        if k in (FLOAT, DOUBLE):
            if not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
                raise TypeError("%r has type %s, but expected one of: int, float" % (value, type(value).__name__))
            return struct.unpack("<f", struct.pack("<f", float(value)))[0] if k == FLOAT else float(value)
        if k == STRING:
            if isinstance(value, bytes):
                value = value.decode("utf-8")
            if not isinstance(value, str):
                raise TypeError("%r has type %s, but expected one of: bytes, unicode"
                                % (value, type(value).__name__))
            return value
        if k == BYTES:
            if not isinstance(value, (bytes, bytearray)):
                raise TypeError("%r has type %s, but expected one of: bytes" % (value, type(value).__name__))
            return bytes(value)
        raise TypeError("field %s holds messages: assign to its fields" % self.name)


class Repeated(list):
    """A repeated scalar field (append / extend check each value)."""

    def __init__(self, field):
        super().__init__()
        self._field = field

    def append(self, value):
        super().append(self._field.check(value))

    def extend(self, values):
        super().extend(self._field.check(v) for v in values)

    def __setitem__(self, i, value):
        super().__setitem__(i, self._field.check(value))


class RepeatedMessages(list):
    """A repeated message field: add(**fields) appends a new message."""

    def __init__(self, field):
        super().__init__()
        self._field = field

    def add(self, **kwargs):
        m = self._field.message(**kwargs)
        super().append(m)
        return m

    def append(self, msg):
        self.add().CopyFrom(msg)

    def extend(self, msgs):
        for m in msgs:
            self.append(m)


class Message:
    FIELDS = ()
    _by_name = None

    @classmethod
    def _fields(cls):
        if cls.__dict__.get("_by_name") is None:
            cls._by_name = {f.name: f for f in cls.FIELDS}
            cls._by_number = {f.number: f for f in cls.FIELDS}
        return cls._by_name

    def __init__(self, **kwargs):
        object.__setattr__(self, "_values", {})
        for k, v in kwargs.items():
            f = self._field(k)
            if f.label == REPEATED:
                getattr(self, k).extend(v)
            elif f.kind == MESSAGE:
                getattr(self, k).CopyFrom(v)
            else:
                setattr(self, k, v)

    @classmethod
    def _field(cls, name):
        f = cls._fields().get(name)
        if f is None:
            raise AttributeError("Protocol message %s has no field %s." % (cls.__name__, name))
        return f

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        f = self._field(name)
        vals = self._values
        if name in vals:
            return vals[name]
        if f.label == REPEATED:
            v = vals[name] = RepeatedMessages(f) if f.kind == MESSAGE else Repeated(f)
            return v
        if f.kind == MESSAGE:       # a sub-message: present once one of its fields is set
            v = vals[name] = f.message()
            return v
        return f.default

    def __setattr__(self, name, value):
        f = self._field(name)
        if f.label == REPEATED or f.kind == MESSAGE:
            raise AttributeError("Assignment not allowed to field \"%s\" in protocol message object." % name)
        self._values[name] = f.check(value)

    # protobuf's Message API ------------------------------------------------------------------------
    def HasField(self, name):     # noqa: N802
        f = self._field(name)
        if f.label == REPEATED:
            raise ValueError("Protocol message has no singular \"%s\" field." % name)
        v = self._values.get(name)
        if f.kind == MESSAGE:
            return v is not None and (v.ListFields() != [] or v.__dict__.get("_present", False))
        return name in self._values

    def ClearField(self, name):   # noqa: N802
        self._field(name)
        self._values.pop(name, None)

    def Clear(self):              # noqa: N802
        self._values.clear()

    def SetInParent(self):        # noqa: N802
        object.__setattr__(self, "_present", True)

    def ListFields(self):         # noqa: N802
        out = []
        for f in sorted(self.FIELDS, key=lambda f: f.number):
            v = self._values.get(f.name)
            if v is None:
                continue
            if f.label == REPEATED:
                if len(v):
                    out.append((f, v))
            elif f.kind == MESSAGE:
                if self.HasField(f.name):
                    out.append((f, v))
            else:
                out.append((f, v))
        return out

    def __eq__(self, other):
        if not isinstance(other, Message) or type(other).__name__ != type(self).__name__:
            return NotImplemented
        mine = [(f.name, list(v) if f.label == REPEATED else v) for f, v in self.ListFields()]
        theirs = [(f.name, list(v) if f.label == REPEATED else v) for f, v in other.ListFields()]
        return mine == theirs

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def IsInitialized(self):      # noqa: N802
        return not self.FindInitializationErrors()

    def FindInitializationErrors(self):   # noqa: N802
        errors = []
        for f in self.FIELDS:
            if f.label == REQUIRED and not self.HasField(f.name):
                errors.append(f.name)
            elif f.kind == MESSAGE and f.name in self._values:
                subs = self._values[f.name] if f.label == REPEATED else [self._values[f.name]]
                for i, m in enumerate(subs):
                    if f.label == REPEATED or self.HasField(f.name):
                        prefix = "%s[%d]." % (f.name, i) if f.label == REPEATED else f.name + "."
                        errors.extend(prefix + e for e in m.FindInitializationErrors())
        return errors

    def CopyFrom(self, other):    # noqa: N802
        if other is self:
            return
        self.Clear()
        self.MergeFromString(other.SerializePartialToString())
        if other.__dict__.get("_present"):
            self.SetInParent()

    def MergeFrom(self, other):   # noqa: N802
        self.MergeFromString(other.SerializePartialToString())

    def SerializeToString(self):  # noqa: N802
        missing = self.FindInitializationErrors()
        if missing:
            raise EncodeError("Message %s is missing required fields: %s" % (type(self).__name__,
                                                                              ",".join(missing)))
        return self.SerializePartialToString()

    def SerializePartialToString(self):   # noqa: N802
        out = bytearray()
        for f, v in self.ListFields():
            for x in (v if f.label == REPEATED else [v]):
                out += _encode(f, x)
        return bytes(out)

    def ByteSize(self):           # noqa: N802
        return len(self.SerializePartialToString())

    def ParseFromString(self, data):      # noqa: N802
        self.Clear()
        return self.MergeFromString(data)

    def MergeFromString(self, data):      # noqa: N802
        try:
            fields = w.parse(data)
        except w.WireError as e:
            raise DecodeError("Error parsing message %s: %s" % (type(self).__name__, e)) from None
        self._fields()
        for number, raw in fields.items():
            f = self._by_number.get(number)
            if f is None:
                continue           # an unknown field: skipped
            values = _decode(f, number, fields)
            if f.label == REPEATED and f.kind == MESSAGE:
                for b in values:
                    getattr(self, f.name).add().MergeFromString(b)
            elif f.label == REPEATED:
                getattr(self, f.name).extend(values)
            elif f.kind == MESSAGE:
                sub = getattr(self, f.name)
                for b in values:
                    sub.MergeFromString(b)
                sub.SetInParent()
            elif values:
                self._values[f.name] = f.check(values[-1])
        return len(data)

    @classmethod
    def FromString(cls, data):    # noqa: N802
        m = cls()
        m.MergeFromString(data)
        return m

    def __str__(self):
        return _text(self, "")

    def __repr__(self):
        return str(self)

    def __reduce__(self):
        return (type(self).FromString, (self.SerializePartialToString(),))


def _encode(f, x):
    k = f.kind
    if k in _INTS or k == BOOL:
        return w.f_varint(f.number, int(x))
    if k == FLOAT:
        return w.f_float(f.number, x)
    if k == DOUBLE:
        return w.key(f.number, w.FIXED64) + struct.pack("<d", x)
    if k in (STRING, BYTES):
        return w.f_bytes(f.number, x)
    return w.f_bytes(f.number, x.SerializePartialToString())


def _decode(f, number, fields):
    k = f.kind
    try:
        if k in (INT64, INT32, ENUM):
            return w.ints(fields, number)
        if k in (UINT64, UINT32):
            return [n & ((1 << 64) - 1) for n in w.ints(fields, number)]
        if k == BOOL:
            return [bool(n) for n in w.ints(fields, number)]
        if k == FLOAT:
            return w.floats(fields, number)
        if k == DOUBLE:
            return [struct.unpack("<d", v)[0] for wire, v in fields[number] if wire == w.FIXED64]
        if k == STRING:
            return w.strings(fields, number)
        return w.blobs(fields, number)
    except w.WireError as e:
        raise DecodeError("field %s: %s" % (f.name, e)) from None


def _text(msg, indent):
    """protobuf's text format, as str() of a generated message prints it."""
    lines = []
    for f, v in msg.ListFields():
        for x in (v if f.label == REPEATED else [v]):
            if f.kind == MESSAGE:
                lines.append("%s%s {\n%s%s}\n" % (indent, f.name, _text(x, indent + "  "), indent))
            elif f.kind in (STRING, BYTES):
                s = x if isinstance(x, str) else x.decode("latin-1")
                lines.append('%s%s: "%s"\n' % (indent, f.name, s.replace("\\", "\\\\").replace('"', '\\"')
                                                .replace("\n", "\\n")))
            elif f.kind == BOOL:
                lines.append("%s%s: %s\n" % (indent, f.name, "true" if x else "false"))
            elif f.kind == ENUM and f.enum is not None:
                lines.append("%s%s: %s\n" % (indent, f.name, f.enum.Name(x)))
            else:
                lines.append("%s%s: %s\n" % (indent, f.name, repr(x) if isinstance(x, float) else x))
    return "".join(lines)
