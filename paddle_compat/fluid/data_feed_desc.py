"""fluid.DataFeedDesc: Paddle's data-feed description (data_feed.proto's DataFeedDesc) read from its protobuf
text form, edited, and printed back in the same text form (fields in field-number order, as protobuf does).
A small schema-driven reader/printer: no protobuf dependency."""

import re

__all__ = ["DataFeedDesc"]

# message -> [(field, kind, repeated)], in field-number order; kind: str, int, bool or a message name
_SCHEMA = {
    "DataFeedDesc": [("name", "str", False), ("batch_size", "int", False), ("multi_slot_desc", "MultiSlotDesc", False),
                     ("pipe_command", "str", False), ("thread_num", "int", False), ("rank_offset", "str", False),
                     ("pv_batch_size", "int", False)],
    "MultiSlotDesc": [("slots", "Slot", True)],
    "Slot": [("name", "str", False), ("type", "str", False), ("is_dense", "bool", False), ("is_used", "bool", False),
             ("shape", "int", True)],
}
_TOKEN = re.compile(r'\s*(?:(#[^\n]*)|("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|([{}:\[\],;<>])|([^\s{}:\[\],;<>"\']+))')


def _tokens(text, where):
    pos, out = 0, []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip():
                raise ValueError("%s: cannot read %r" % (where, text[pos:pos + 20]))
            break
        pos = m.end()
        if m.group(1):
            continue
        out.append(m.group(2) or m.group(3) or m.group(4))
    return out


def _value(tok, kind, field, where):
    if kind == "str":
        if tok[:1] not in "\"'":
            raise ValueError("%s: field %s needs a quoted string, got %s" % (where, field, tok))
        return bytes(tok[1:-1], "utf-8").decode("unicode_escape")
    if kind == "int":
        return int(tok, 0)
    if kind == "bool":
        if tok in ("true", "True", "1", "t"):
            return True
        if tok in ("false", "False", "0", "f"):
            return False
        raise ValueError("%s: field %s needs true or false, got %s" % (where, field, tok))
    raise AssertionError(kind)


def _parse(toks, i, msg, where, closing=None):
    fields = {f: (k, r) for f, k, r in _SCHEMA[msg]}
    out = {}
    while i < len(toks):
        t = toks[i]
        if t == closing:
            return out, i + 1
        if t not in fields:
            raise ValueError("%s: %s has no field %r (fields: %s)" % (where, msg, t, ", ".join(fields)))
        kind, rep = fields[t]
        i += 1
        if kind in _SCHEMA:
            if toks[i] == ":":
                i += 1
            close = {"{": "}", "<": ">"}.get(toks[i])
            if close is None:
                raise ValueError("%s: field %s needs { ... }" % (where, t))
            sub, i = _parse(toks, i + 1, kind, where, close)
            val = sub
        else:
            if toks[i] != ":":
                raise ValueError("%s: expected ':' after %s" % (where, t))
            i += 1
            if toks[i] == "[":
                vals, i = [], i + 1
                while toks[i] != "]":
                    if toks[i] != ",":
                        vals.append(_value(toks[i], kind, t, where))
                    i += 1
                i += 1
                out.setdefault(t, []).extend(vals)
                continue
            val = _value(toks[i], kind, t, where)
            i += 1
        if rep:
            out.setdefault(t, []).append(val)
        else:
            out[t] = val
        if i < len(toks) and toks[i] in (",", ";"):
            i += 1
    if closing is not None:
        raise ValueError("%s: missing %r" % (where, closing))
    return out, i


def _print(msg, data, indent, lines):
    pad = "  " * indent
    for field, kind, rep in _SCHEMA[msg]:
        if field not in data:
            continue
        for v in (data[field] if rep else [data[field]]):
            if kind in _SCHEMA:
                lines.append("%s%s {" % (pad, field))
                _print(kind, v, indent + 1, lines)
                lines.append("%s}" % pad)
            elif kind == "str":
                lines.append('%s%s: "%s"' % (pad, field, v.replace("\\", "\\\\").replace('"', '\\"')))
            elif kind == "bool":
                lines.append("%s%s: %s" % (pad, field, "true" if v else "false"))
            else:
                lines.append("%s%s: %d" % (pad, field, v))


class DataFeedDesc(object):
    """Reads proto_file (text form of Paddle's DataFeedDesc); set_batch_size / set_dense_slots /
    set_use_slots edit it and desc() prints it back."""

    def __init__(self, proto_file):
        with open(proto_file, "r") as f:
            text = f.read()
        self._data = {"pipe_command": "cat"}
        parsed, _ = _parse(_tokens(text, proto_file), 0, "DataFeedDesc", proto_file)
        self._data.update(parsed)
        for i, slot in enumerate(self._slots()):
            for req in ("name", "type"):
                if req not in slot:
                    raise ValueError("%s: slot %d lacks its required field %s" % (proto_file, i, req))
        self._file = proto_file

    def _slots(self):
        return self._data.get("multi_slot_desc", {}).get("slots", [])

    def _mark(self, names, field, what):
        if self._data.get("name") != "MultiSlotDataFeed":
            raise ValueError("Only MultiSlotDataFeed needs %s, please check your datafeed.proto" % what)
        index = {s["name"]: s for s in self._slots()}
        for n in names:
            if n not in index:
                raise KeyError("%s: no slot named %r in %s (slots: %s)" % (what, n, self._file, ", ".join(index)))
            index[n][field] = True

    def set_batch_size(self, batch_size):
        self._data["batch_size"] = int(batch_size)

    def set_dense_slots(self, dense_slots_name):
        self._mark(dense_slots_name, "is_dense", "set_dense_slots")

    def set_use_slots(self, use_slots_name):
        self._mark(use_slots_name, "is_used", "set_use_slots")

    def desc(self):
        lines = []
        _print("DataFeedDesc", self._data, 0, lines)
        return "\n".join(lines) + "\n" if lines else ""
