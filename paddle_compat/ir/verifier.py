"""Program verifier (like torch.fx's Graph.lint): every input is defined before use, every op type is known.

Tests install it as a change hook (tests/conftest.py), so it runs after every public program change.
"""

from . import op_info
from .roles import is_autograd_op

__all__ = ["verify", "ProgramError"]

# Op types that have meaning only inside another op's lowering or are markers of Paddle's graph.
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
            defined.update(op.output_arg_names)
    return None


def _grad_marker_input(op, slot):
    # Grad ops list forward outputs and @GRAD inputs as dependencies; those are defined by construction.
    return is_autograd_op(op)
