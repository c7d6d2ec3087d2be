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


def _args(names, getter):
    parts = []
    for n in names:
        parts.append('%s=[%s]' % (n, ", ".join('"%s"' % a for a in getter(n))))
    return "{" + ", ".join(parts) + "}"


def op_to_code(op, skip_op_callstack=True):
    attrs = []
    for name in sorted(op.attr_names):
        if skip_op_callstack and name == "op_callstack":
            continue
        attrs.append("%s = %r" % (name, op.attr(name)))
    return "%s = %s(inputs=%s, %s)" % (_args(op.output_names, op.output), op.type,
                                       _args(op.input_names, op.input), ", ".join(attrs))


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
