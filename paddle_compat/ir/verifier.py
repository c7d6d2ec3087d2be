"""Program verifier (like torch.fx's Graph.lint): every input is defined before use, every op type is known,
and every output variable's declared shape agrees with what its op type's infer_shape gives (-1 agrees with
any size): a builder that computed a shape of its own, or a program edited after the fact, is named.

Tests install `verify` as a change hook (tests/conftest.py), so it runs after every public program change;
`apply_infer_shape` runs when an op is appended (Block.append_op), as Paddle 1.8's Operator ran InferShape.
"""

from . import op_info
from .roles import is_autograd_op

__all__ = ["verify", "ProgramError", "inferred_shapes", "apply_infer_shape"]

# The executor's own ops (declared, without a kernel): a `known` of the lowering's kernels lacks them.
_MARKER_OPS = frozenset(["feed", "fetch"])
_EMPTY = "@EMPTY@"      # Paddle's kEmptyVarName: a grad op's output nobody needs (programs Paddle wrote)


class ProgramError(ValueError):
    pass


def verify(program, known=None):
    """Raise ProgramError naming the first problem found, else return None. known: the op types to accept (the
    lowering's, say); by default those the op registry declares (what Block.append_op accepts)."""
    is_known = op_info.is_known_type if known is None else known.__contains__
    for block in program.blocks:
        defined = set()
        b = block.parent
        while b is not None:
            defined.update(b.vars)
            b = b.parent
        for v in block.vars.values():
            if v.persistable or v.is_data or v.need_check_feed:   # need_check_feed: fluid.data's, in a parsed desc
                defined.add(v.name)
        # a variable several ops write (an in-place reshape of an fc's output) has the last one's shape
        last_writer = {n: i for i, op in enumerate(block.ops) for n in op.output_arg_names}
        # a variable a control-flow body also writes may change shape there (assign of a reshaped loop value)
        for n in _written_in_other_blocks(program, block):
            last_writer.pop(n, None)
        for i, op in enumerate(block.ops):
            where = "block %d op %d '%s'%s" % (block.idx, i, op.type,
                                               (" (created at %s)" % op.callsite) if op.callsite else "")
            if not is_known(op.type) and op.type not in _MARKER_OPS and not is_autograd_op(op):
                raise ProgramError("%s: unknown op type" % where)
            for slot, names in list(op.inputs.items()) + list(op.outputs.items()):
                for n in names:
                    if n != _EMPTY and block._find_var_recursive(n) is None:
                        raise ProgramError("%s: slot %s names variable '%s', which no block declares"
                                           % (where, slot, n))
            if block.idx == 0:
                for slot, names in op.inputs.items():
                    for n in names:
                        if n not in defined and not _grad_marker_input(op, slot):
                            raise ProgramError("%s: input %s='%s' is used before any op defines it"
                                               % (where, slot, n))
            _check_shapes(block, i, op, where, last_writer)
            defined.update(op.output_arg_names)
    return None


def _written_in_other_blocks(program, block):
    """Outputs of `assign` ops of other blocks (apply_infer_shape gives them the assigned value's shape)."""
    return set(n for b in program.blocks if b.idx != block.idx for op in b.ops if op.type == "assign"
               for n in op.output_arg_names)


def _check_shapes(block, i, op, where, last_writer):
    for slot, name, declared, shape in _disagreements(block, op):
        if last_writer.get(name) != i:
            continue
        raise ProgramError("%s: output %s='%s' is declared with shape %s, but the op's infer_shape gives %s"
                           % (where, slot, name, list(declared), list(shape)))


def _grad_marker_input(op, slot):
    # Grad ops list forward outputs and @GRAD inputs as dependencies; those are defined by construction.
    return is_autograd_op(op)


def inferred_shapes(block, op):
    """{output slot: [shape, ...]} that op's type's infer_shape gives for its input variables, or None when the
    type declares none or its inputs cannot be resolved or shaped yet."""
    infer = op_info.infer_shape_of(op.type)
    if infer is None:
        return None
    ins = {}
    for slot, names in op.inputs.items():
        vs = [block._find_var_recursive(n) for n in names if n != _EMPTY]
        if any(v is None for v in vs):
            return None
        if vs:
            ins[slot] = vs
    try:
        got = infer(ins, op.attrs)
        return {slot: [tuple(int(d) for d in m.shape) if m is not None else None
                       for m in (ms if isinstance(ms, (list, tuple)) else [ms])]
                for slot, ms in got.items()}
    except Exception:    # noqa: BLE001 -- inputs not shaped yet (an unset shape, a slot left out): Paddle's
        return None      # InferShape would fail at run time instead; the kernel's own check names the op then


def _contradicts(declared, inferred):
    """Different rank, or a dim both know (>= 0) that differs; -1 (unknown) agrees with anything."""
    if len(declared) != len(inferred):
        return True
    return any(a >= 0 and b >= 0 and a != b for a, b in zip(declared, inferred))


def _outputs(block, op):
    """(slot, variable, inferred shape) of each output infer_shape gives a shape for."""
    got = inferred_shapes(block, op)
    for slot, shapes in (got or {}).items():
        for name, shape in zip(op.outputs.get(slot, ()), shapes):
            v = block._find_var_recursive(name)
            if v is not None and shape is not None:
                yield slot, v, shape


def _disagreements(block, op):
    for slot, v, shape in _outputs(block, op):
        if v.shape and _contradicts(tuple(v.shape), shape):
            yield slot, v.name, tuple(v.shape), shape


def apply_infer_shape(block, op):
    """Output variables without a shape take the one infer_shape gives; a shape given that contradicts it is a
    ProgramError naming the op, the slot and both shapes."""
    for slot, v, shape in _outputs(block, op):
        if not v.shape:
            v.shape = shape
            v._shape_inferred = True
        elif not _contradicts(tuple(v.shape), shape):
            continue
        elif op.type == "assign" or v.persistable or getattr(v, "_shape_inferred", False):
            # a variable written again takes the new shape, as Paddle 1.8's InferShape overwrote it and its
            # scripts rely on: layers.assign into a persistable, a second assign of another size, a while_loop
            # body assigning a reshaped value back to its loop variable
            v.shape = shape
            v._shape_inferred = True
        else:
            # a fresh output whose creator declared a shape its op cannot give: a builder's mistake, named here
            # rather than at run time (Paddle overwrote it silently)
            raise ProgramError("op '%s' (block %d): output %s='%s' is declared with shape %s, but its infer_shape "
                               "gives %s" % (op.type, block.idx, slot, v.name, list(v.shape), list(shape)))
