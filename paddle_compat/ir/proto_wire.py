"""A minimal protocol-buffers wire-format reader and writer (proto2 scalars, strings, sub-messages).

Only what Paddle's ProgramDesc needs; written against the public wire-format description so that no
generated code or protobuf runtime is required."""

import struct

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


# -- writing -----------------------------------------------------------------------------------------

def varint(n):
    n = int(n)
    if n < 0:
        n += 1 << 64          # negative int32/int64 are sent as 10-byte two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint((field << 3) | wire)


def f_varint(field, n):
    return key(field, VARINT) + varint(n)


def f_bytes(field, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return key(field, BYTES) + varint(len(data)) + data


def f_float(field, x):
    return key(field, FIXED32) + struct.pack("<f", float(x))


# -- reading -----------------------------------------------------------------------------------------

def _read_varint(buf, pos):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise WireError("truncated varint at byte %d" % pos)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError("varint longer than 10 bytes at byte %d" % pos)


def parse(buf):
    """{field number: [raw values in order]}: ints for varints, bytes for length-delimited and fixed."""
    buf = memoryview(bytes(buf)) if not isinstance(buf, memoryview) else buf
    fields = {}
    pos, end = 0, len(buf)
    while pos < end:
        k, pos = _read_varint(buf, pos)
        field, wire = k >> 3, k & 7
        if field == 0:
            raise WireError("field number 0 at byte %d" % pos)
        if wire == VARINT:
            v, pos = _read_varint(buf, pos)
        elif wire == BYTES:
            n, pos = _read_varint(buf, pos)
            if pos + n > end:
                raise WireError("length %d runs past the end (byte %d of %d)" % (n, pos, end))
            v, pos = bytes(buf[pos:pos + n]), pos + n
        elif wire in (FIXED32, FIXED64):
            n = 4 if wire == FIXED32 else 8
            if pos + n > end:
                raise WireError("truncated fixed field at byte %d" % pos)
            v, pos = bytes(buf[pos:pos + n]), pos + n
        else:
            raise WireError("unsupported wire type %d at byte %d" % (wire, pos))
        fields.setdefault(field, []).append((wire, v))
    return fields


def signed(n):
    return n - (1 << 64) if n >= 1 << 63 else n


def ints(fields, field):
    """A repeated (packed or not) int32/int64/bool/enum field."""
    out = []
    for wire, v in fields.get(field, ()):
        if wire == VARINT:
            out.append(signed(v))
        elif wire == BYTES:           # packed
            pos = 0
            while pos < len(v):
                n, pos = _read_varint(v, pos)
                out.append(signed(n))
        else:
            raise WireError("field %d: expected an integer, got wire type %d" % (field, wire))
    return out


def floats(fields, field):
    out = []
    for wire, v in fields.get(field, ()):
        if wire == FIXED32:
            out.append(struct.unpack("<f", v)[0])
        elif wire == BYTES:
            if len(v) % 4:
                raise WireError("field %d: packed floats of %d bytes" % (field, len(v)))
            out.extend(struct.unpack("<%df" % (len(v) // 4), v))
        else:
            raise WireError("field %d: expected a float, got wire type %d" % (field, wire))
    return out


def one_int(fields, field, default=None):
    v = ints(fields, field)
    if not v:
        if default is None:
            raise WireError("required field %d is missing" % field)
        return default
    return v[-1]


def blobs(fields, field):
    out = []
    for wire, v in fields.get(field, ()):
        if wire != BYTES:
            raise WireError("field %d: expected bytes, got wire type %d" % (field, wire))
        out.append(v)
    return out


def strings(fields, field):
    try:
        return [b.decode("utf-8") for b in blobs(fields, field)]
    except UnicodeDecodeError as e:
        raise WireError("field %d: not UTF-8 text (%s)" % (field, e)) from None


def one_string(fields, field, default=None):
    v = strings(fields, field)
    if not v:
        if default is None:
            raise WireError("required field %d is missing" % field)
        return default
    return v[-1]
