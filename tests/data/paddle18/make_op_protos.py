"""Records what Paddle 1.8.5's op registry declares of every op type (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_op_protos.py

Writes paddle_compat/ir/op_protos.json: {op type: {"inputs": [[name, flags], ...], "outputs": [...],
"attrs": [[name, type, default], ...], "grad_attrs": [...] (only where the grad op does not carry every
attribute of the forward op: the names it carries)}} where flags is a string of d (duplicable), i (intermediate), o
(dispensable), type is framework.proto's AttrType number and default is the value Paddle's attribute checker
fills in (OpDesc.check_attrs), or the marker {"required": true} for an attribute without a default. Slot and
attribute order is the registry's. Data only (names, flags, defaults): no comments or code of Paddle's.
paddle_compat.ops.protos reads it to answer fluid.framework.OpProtoHolder and to give each op Paddle's
default attributes.
"""

import json
import os
import re

import paddle.fluid as fluid
from paddle.fluid import core
from paddle.fluid.proto import framework_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
OUT = os.path.join(ROOT, "paddle_compat", "ir", "op_protos.json")

A = framework_pb2
# a value of each type to put in a required attribute so that check_attrs goes on to the next one
DUMMY = {A.INT: 1, A.FLOAT: 1.0, A.STRING: "x", A.INTS: [1], A.FLOATS: [1.0], A.STRINGS: ["x"],
         A.BOOLEAN: True, A.BOOLEANS: [True], A.LONG: 1, A.LONGS: [1]}
# where a required attribute's checker refuses the generic value
VALID = {"variances": [0.1, 0.1, 0.2, 0.2], "win_size": 2, "pooling_type": "max", "unpooling_type": "max",
         "functor_list": ["elementwise_add", "relu"]}
VALID_FOR = {("assign_value", "dtype"): 5}
REQUIRED = re.compile(r"Attribute '([^']+)' is required")


def _flags(var):
    return ("d" if var.duplicable else "") + ("i" if var.intermediate else "") + ("o" if var.dispensable else "")


def _plain(v):
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "id") and not isinstance(v, (int, float, str, bool)):   # a BlockDesc
        return {"block": v.id}
    return v


def defaults(proto):
    """{attr: default} from Paddle's attribute checker, and the names of the required attributes."""
    types = {a.name: a.type for a in proto.attrs}
    required = []
    for _ in range(len(types) + 1):
        desc = core.ProgramDesc()
        op = desc.block(0).append_op()
        op.set_type(proto.type)
        for name in required:
            if types[name] == A.BLOCK:
                op.set_block_attr(name, desc.block(0))
            elif types[name] == A.BLOCKS:
                op.set_blocks_attr(name, [desc.block(0)])
            else:
                op._set_attr(name, VALID_FOR.get((proto.type, name), VALID.get(name, DUMMY[types[name]])))
        try:
            op.check_attrs()
        except Exception as e:   # Paddle's EnforceNotMet
            m = REQUIRED.search(str(e))
            if m is None or m.group(1) in required:
                raise
            required.append(m.group(1))
            continue
        return {n: _plain(op.attr(n)) for n in op.attr_names() if n not in required}, required
    raise RuntimeError("check_attrs of %s never succeeded" % proto.type)


def grad_attrs(proto, required):
    """The attribute names of the <type>_grad op Paddle's grad maker makes, when they are not the forward op's
    (most grad makers copy every attribute; a few copy none or some), else None. Ops with sub-blocks are left
    out (their grad makers need a real program)."""
    types = {a.name: a.type for a in proto.attrs}
    if any(t in (A.BLOCK, A.BLOCKS) for t in types.values()):
        return None
    desc = core.ProgramDesc()
    op = desc.block(0).append_op()
    op.set_type(proto.type)
    for v in proto.inputs:
        op.set_input(v.name, [v.name + "_in"])
    for v in proto.outputs:
        op.set_output(v.name, [v.name + "_out"])
    for name in required:
        op._set_attr(name, VALID_FOR.get((proto.type, name), VALID.get(name, DUMMY[types[name]])))
    op.check_attrs()
    try:
        grads, _ = core.get_grad_op_desc(op, set(), [])
    except Exception:     # no grad maker
        return None
    for g in grads:
        if g.type() == proto.type + "_grad" and set(g.attr_names()) != set(op.attr_names()):
            return sorted(g.attr_names())
    return None


def record():
    table = {}
    for raw in core.get_all_op_protos():
        p = framework_pb2.OpProto.FromString(raw)
        found, required = defaults(p)
        attrs = []
        for a in p.attrs:
            if a.name in required:
                attrs.append([a.name, int(a.type), {"required": True}])
            else:
                attrs.append([a.name, int(a.type), found[a.name]])
        table[p.type] = {"inputs": [[v.name, _flags(v)] for v in p.inputs],
                         "outputs": [[v.name, _flags(v)] for v in p.outputs], "attrs": attrs}
        kept = grad_attrs(p, required)
        if kept is not None:
            table[p.type]["grad_attrs"] = kept
    with open(OUT, "w") as f:
        f.write("{\n")
        f.write(",\n".join("%s: %s" % (json.dumps(k), json.dumps(table[k], separators=(",", ":")))
                           for k in sorted(table)))
        f.write("\n}\n")
    print("wrote %d op types to %s" % (len(table), OUT))


if __name__ == "__main__":
    record()
