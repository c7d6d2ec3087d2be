"""Program._prune_with_input: the ops (and variables) needed to compute some targets from some fed variables,
as Paddle 1.8's framework/prune.cc keeps them.

Rules (Paddle's):
  * a target variable stands for the first op of the global block that writes it, skipping optimize ops not
    themselves targets (they rewrite parameters); a target that is fed needs no op;
  * walking a block backwards, an op runs when it is a target, or when it writes a variable a running op reads
    and it is not an optimize op (an optimizer reads and writes its parameter: it would pull every optimizer
    in); what a running op reads, fed variables aside, is needed from then on;
  * a running op with a sub-block has that block pruned the same way, what the op reads and writes being
    needed there; blocks are numbered again in the order they are kept (pruned_origin_block_id_map says
    where each came from);
  * a block keeps only the variables its kept ops use.
"""

from .block import Block
from .operator import Operator
from .roles import OP_ROLE_KEY, OpRole
from .variable import Variable

__all__ = ["prune_with_input", "target_ops"]


def _is_block(v):
    return hasattr(v, "ops") and hasattr(v, "idx")


def is_optimize_op(op):
    return bool(op.attrs.get(OP_ROLE_KEY, 0) & OpRole.Optimize)


def target_ops(program, feeded_var_names, targets):
    """The ops `targets` (Variables, names or Operators) stand for (Paddle's targets_idx)."""
    ops = []
    for t in targets:
        if isinstance(t, Operator):
            # by position, as Paddle marks targets: an op of a clone of this program stands for its copy here
            b = t.block.idx if t.block is not None else len(program.blocks)
            if b >= len(program.blocks) or t.idx >= len(program.blocks[b].ops):
                raise ValueError("_prune_with_input: target op '%s' is not in this program" % t.type)
            ops.append(program.blocks[b].ops[t.idx])
            continue
        if isinstance(t, Variable):
            name = t.name
        elif isinstance(t, str):
            name = t
        else:
            raise ValueError("All targets of Program._prune_with_input() can only be Variable or Operator, but "
                             "received %s." % type(t))
        if name in feeded_var_names:   # fed (a leaf, or its producer is cut off): nothing to run for it
            continue
        found = None
        for op in program.global_block().ops:
            if name in op.output_arg_names and (not is_optimize_op(op) or any(op is x for x in targets)):
                found = op
                break
        if found is None:
            raise ValueError("The target variable used for pruning should have an associated operator that "
                             "generates it (no op of the global block writes '%s')." % name)
        ops.append(found)
    return ops


def prune_with_input(program, feeded_var_names, targets):
    """A new Program holding what `targets` need given `feeded_var_names`, and the origin of each of its
    blocks ({new block index: old block index})."""
    feeds = set(feeded_var_names)
    is_target = {id(op) for op in target_ops(program, feeds, targets)}
    res = type(program)()
    res.blocks = []
    res._seed = program._seed     # (Paddle's copy keeps 0; ops that read the seed at run time need the same)
    origin = {}

    def prune_block(src, parent_idx, needed):
        keep = []
        for op in reversed(src.ops):
            if id(op) in is_target or (not is_optimize_op(op) and any(n in needed for n in op.output_arg_names)):
                needed.update(n for n in op.input_arg_names if n not in feeds)
                keep.append(op)
        keep.reverse()
        nb = Block(res, len(res.blocks), parent_idx)
        nb.forward_block_idx = src.forward_block_idx
        res.blocks.append(nb)
        origin[nb.idx] = src.idx
        copies = []
        for op in keep:
            attrs = dict(op.attrs)
            for k, v in op.attrs.items():
                if _is_block(v):
                    attrs[k] = prune_sub(op, v, nb.idx)
                elif isinstance(v, (list, tuple)) and v and _is_block(v[0]):
                    attrs[k] = [prune_sub(op, b, nb.idx) for b in v]
            copies.append((op, attrs))
        nb.ops = [Operator(nb, op.type, op.inputs, op.outputs, attrs, op.callsite) for op, attrs in copies]
        used = set()
        for op in nb.ops:
            used.update(op.input_arg_names)
            used.update(op.output_arg_names)
        for name in sorted(used):       # (prune.cc keeps them in a std::set: by name)
            if name in src.vars:
                nb.vars[name] = src.vars[name]._copy_meta_to(nb)
        return nb

    def prune_sub(op, sub, parent_idx):
        needed = {n for n in op.input_arg_names + op.output_arg_names if n not in feeds}
        return prune_block(sub, parent_idx, needed)

    prune_block(program.global_block(), -1, set())
    res.current_block_idx = 0
    return res, origin
