"""Programs to and from files: Paddle's ProgramDesc bytes (a __model__ / .pdmodel file; the schema is
proto_desc.py) and this package's program JSON (plain dicts)."""

import numpy as np

from .block import Block
from .dtypes import convert_dtype
from .operator import Operator
from .program import Program
from .proto_wire import WireError
from .variable import Parameter, Variable

__all__ = ["parse_program", "parse_model_file", "program_to_dict", "program_from_dict"]

def parse_program(data):
    """A Program from Paddle's ProgramDesc bytes. Raises proto_wire.WireError on malformed input."""
    return Program.parse_from_string(data)


def parse_model_file(data, path):
    """parse_program, with errors that name the file."""
    try:
        return parse_program(data)
    except (WireError, ValueError, KeyError) as e:
        raise ValueError("%s is not a valid Paddle ProgramDesc (truncated or corrupt?): %s" % (path, e)) from None


_ARRAY = "__ndarray__"
_BLOCK = "__block__"


def _attr_out(v):
    if isinstance(v, Block):
        return {_BLOCK: v.idx}
    if isinstance(v, np.ndarray):
        return {_ARRAY: v.tolist(), "dtype": v.dtype.name}
    if isinstance(v, (list, tuple)) and v and isinstance(v[0], Block):
        return [{_BLOCK: b.idx} for b in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (set, frozenset)):
        return sorted(v)
    return v


def _attr_in(v, program):
    if isinstance(v, dict) and _BLOCK in v:
        return program.blocks[v[_BLOCK]]
    if isinstance(v, dict) and _ARRAY in v:
        return np.asarray(v[_ARRAY], dtype=v["dtype"])
    if isinstance(v, list) and v and isinstance(v[0], dict) and _BLOCK in v[0]:
        return [program.blocks[x[_BLOCK]] for x in v]
    return v


def program_to_dict(program):
    blocks = []
    for b in program.blocks:
        vars_ = []
        for v in b.vars.values():
            d = {"name": v.name, "shape": list(v.shape), "dtype": int(v.dtype), "type": int(v.type),
                 "lod_level": v.lod_level, "persistable": v.persistable, "stop_gradient": v.stop_gradient,
                 "is_data": v.is_data}
            if isinstance(v, Parameter):
                d["parameter"] = {"trainable": v.trainable,
                                  "learning_rate": v.optimize_attr.get("learning_rate", 1.0)}
            vars_.append(d)
        ops = [{"type": op.type, "inputs": dict(op.inputs), "outputs": dict(op.outputs),
                "attrs": {k: _attr_out(a) for k, a in op.attrs.items()}} for op in b.ops]
        blocks.append({"idx": b.idx, "parent_idx": b.parent_idx, "forward_block_idx": b.forward_block_idx,
                       "vars": vars_, "ops": ops})
    return {"format": "paddle_compat.program/1", "random_seed": program.random_seed, "blocks": blocks}


def program_from_dict(d):
    if d.get("format") != "paddle_compat.program/1":
        raise ValueError("not a paddle_compat program (format %r)" % d.get("format"))
    p = Program()
    p.random_seed = d.get("random_seed", 0)
    p.blocks = [Block(p, bd["idx"], bd["parent_idx"]) for bd in d["blocks"]]
    for b, bd in zip(p.blocks, d["blocks"]):
        b.forward_block_idx = bd.get("forward_block_idx", -1)
    for b, bd in zip(p.blocks, d["blocks"]):
        for vd in bd["vars"]:
            kw = dict(name=vd["name"], shape=vd["shape"], dtype=convert_dtype(vd["dtype"]),
                      type=convert_dtype(vd["type"]), lod_level=vd["lod_level"], persistable=vd["persistable"],
                      stop_gradient=vd["stop_gradient"], is_data=vd.get("is_data", False))
            if "parameter" in vd:
                kw.pop("persistable")
                v = Parameter(b, trainable=vd["parameter"]["trainable"],
                              optimize_attr={"learning_rate": vd["parameter"]["learning_rate"]}, **kw)
            else:
                v = Variable(b, **kw)
            b.vars[v.name] = v
        for od in bd["ops"]:
            b.ops.append(Operator(b, od["type"], od["inputs"], od["outputs"],
                                  {k: _attr_in(a, p) for k, a in od["attrs"].items()}))
    return p
