"""Human-readable program text, in the layout of Paddle 1.8's transpiler.details.program_utils."""

__all__ = ["program_to_code", "block_to_code", "op_to_code", "variable_to_code"]


def variable_to_code(var):
    lod = getattr(var, "lod_level", 0)
    text = "var %s : fluid.%s.shape%s.astype(%s)" % (
        var.name, getattr(var, "type", "LOD_TENSOR"), list(var.shape or []), var.dtype)
    if lod:
        text += ".lod_level(%d)" % lod
    if getattr(var, "persistable", False):
        text = "persist " + text
    return text


def _slots(names, getter):
    return "{" + ", ".join("%s=%s" % (n, getter(n)) for n in names) + "}"


def _attr_text(value):
    """Paddle's text of an attribute: block[i] for a sub-block, blocks[i, ...] for several, else str()."""
    if hasattr(value, "ops") and hasattr(value, "idx"):
        return "block[%d]" % value.idx
    if isinstance(value, (list, tuple)) and value and all(hasattr(b, "ops") and hasattr(b, "idx") for b in value):
        return "blocks%s" % [b.idx for b in value]
    return "%s" % (value,)


def op_to_code(op, skip_op_callstack=True):
    attrs = ", ".join("%s = %s" % (name, _attr_text(op.attr(name))) for name in sorted(op.attr_names)
                      if not (skip_op_callstack and name == "op_callstack"))
    ins = _slots(op.input_names, op.input)
    if not op.output_names:
        return "%s(inputs=%s, %s)" % (op.type, ins, attrs)
    return "%s = %s(inputs=%s, %s)" % (_slots(op.output_names, op.output), op.type, ins, attrs)


def block_to_code(block, block_idx, fout=None, skip_op_callstack=False):
    lines = ["{ // block %d" % block_idx]
    lines += ["    " + variable_to_code(v) for v in block.vars.values()]
    lines.append("")
    lines += ["    " + op_to_code(op, skip_op_callstack) for op in block.ops]
    lines.append("}")
    text = "\n".join(lines)
    print(text, file=fout)
    return text


def program_to_code(prog, fout=None, skip_op_callstack=True):
    """Print every block of `prog` (to `fout`, default stdout) and return the text."""
    return "\n".join(block_to_code(b, i, fout, skip_op_callstack) for i, b in enumerate(prog.blocks))
