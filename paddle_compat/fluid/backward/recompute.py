"""Forward recomputation for append_backward(..., checkpoints=...) (RecomputeOptimizer), as Paddle 1.8 records it.

The forward ops of the loss are cut into segments between consecutive checkpoints (ordered by the op that
writes them). Walking back from the loss, the backward section gets: the grad ops of the ops after the last
segment, then for each segment (last first) copies of its forward ops whose outputs are not kept (their
non-kept variables renamed `<name>.subprog_<k>`, k counting segments from the last), followed by the
segment's grad ops reading the renamed copies. Kept: checkpoints, persistables, variables a segment reads
from before it or that are read after it, inputs of the program, and the `seed` of each dropout: every
dropout on the path first gets a `seed` op whose value both the forward and the recomputed dropout read,
so the recomputed mask is the forward one.

Here gradients come from one torch autograd call over the forward graph (backends/lowering/autograd_region.py):
they equal plain backward's, and what stays alive is autograd's choice, so no memory is saved. The grad ops
read the copies for the record only; the lowering runs a copy only when something else reads it (a fetch).
"""

from ...ir import OP_ROLE_KEY, OpRole, VarType, unique_name
from ...ir.roles import SUBPROG_SUFFIX

__all__ = ["insert_dropout_seeds", "plan", "append_recomputed_op"]


def insert_dropout_seeds(block, path):
    """Give every dropout of `path` a `seed` op just before it (its fix_seed/seed attrs move onto that op,
    0 meaning a fresh seed each run) and a Seed input; returns the path with the seed ops in place."""
    out = []
    for op in path:
        if op.type == "dropout":
            seed = int(op.attrs.get("seed", 0) or 0) if op.attrs.get("fix_seed", False) else 0
            op_name = unique_name.generate("seed")
            var = block.create_var(name=unique_name.generate_with_ignorable_key(op_name + ".tmp"),
                                   dtype=VarType.INT32, shape=(1,), type=VarType.LOD_TENSOR,
                                   persistable=False, stop_gradient=False)
            out.append(block._insert_op(op.idx, type="seed", inputs={}, outputs={"Out": [var]},
                                        attrs={"seed": seed}))
            op.inputs["Seed"] = [var.name]
            op.attrs.pop("fix_seed", None)
            op.attrs.pop("seed", None)
            op._touch()
        out.append(op)
    return out


class _Uses:
    """For each variable of the path: the path positions of the ops reading it and writing it."""

    def __init__(self, path):
        self.readers, self.writers = {}, {}
        for i, op in enumerate(path):
            for n in op.input_arg_names:
                self.readers.setdefault(n, []).append(i)
                self.writers.setdefault(n, [])
            for n in op.output_arg_names:
                self.writers.setdefault(n, []).append(i)
                self.readers.setdefault(n, [])

    def known(self, n):
        return n in self.writers

    def crossing(self, path, begin, end):
        """Variables of ops [begin, end) read by an op at or after `end`, or written before `begin`."""
        names = []
        for op in path[begin:end]:
            names += [n for n in op.output_arg_names if any(i >= end for i in self.readers.get(n, ()))]
            names += [n for n in op.input_arg_names if any(i < begin for i in self.writers.get(n, ()))]
        return names


def _ordered_checkpoints(uses, names):
    """Checkpoints the path uses, by the last op writing them (inputs of the path first); the rest are dropped
    (Paddle logs them at debug level)."""
    keyed = [(max(uses.writers[n]) if uses.writers[n] else -1, n) for n in names if uses.known(n)]
    return [n for _, n in sorted(keyed, key=lambda t: t[0])]


def _segments(uses, path, checkpoints):
    segs = []
    if len(checkpoints) == 1:
        last = max(uses.writers[checkpoints[0]], default=-1)
        if last > 0:
            segs.append([0, last + 1])
    else:
        for a, b in zip(checkpoints, checkpoints[1:]):
            first = min(uses.readers[a], default=len(path))
            last = max(uses.writers[b], default=-1)
            if first < last:
                segs.append([first, last + 1])
    if segs and segs[0][0] != 0:
        segs.insert(0, [0, segs[0][0]])
    return segs


def plan(block, path, checkpoint_names):
    """The backward section for `path` (forward ops, seed ops included) as steps in order:
    ("grad", op, rename) for a grad op, ("forward", op, rename) for a recomputed copy of op.
    rename: {forward name: recomputed name}."""
    for op in path:
        _refuse_sub_block(op)
    uses = _Uses(path)
    checkpoints = _ordered_checkpoints(uses, list(dict.fromkeys(checkpoint_names)))
    segments = _segments(uses, path, checkpoints)
    kept = set()
    for begin, end in segments:
        kept.update(uses.crossing(path, begin, end))
    kept.update(n for op in path if op.type == "seed" for n in op.output_arg_names)
    def persistable(n):
        v = block._find_var_recursive(n)
        return v is not None and v.persistable

    for n, w in uses.writers.items():      # the path's inputs (data)
        if not w and uses.readers[n] and not persistable(n):
            kept.add(n)
    for op in path:
        if op.type == "read":
            kept.update(op.output_arg_names)
    in_memory = kept | set(checkpoints)

    steps, rename = [], {}
    todo = len(path)
    if not segments:
        return [("grad", op, None) for op in reversed(path)]
    for k, (begin, end) in enumerate(reversed(segments)):
        steps += [("grad", op, None) for op in reversed(path[end:todo])]
        todo = begin
        ops = path[begin:end]
        suffix = SUBPROG_SUFFIX % k
        for op in ops:
            for n in op.input_arg_names + op.output_arg_names:
                if n not in rename and n not in in_memory and not persistable(n):
                    rename[n] = n + suffix
        now = dict(rename)
        steps += [("forward", op, now) for op in ops
                  if any(not persistable(n) and n not in in_memory for n in op.output_arg_names)]
        steps += [("grad", op, now) for op in reversed(ops)]
    return steps


def _refuse_sub_block(op):
    if "sub_block" in op.attrs:
        raise NotImplementedError("RecomputeOptimizer: op %s has a sub-block; recomputation does not support "
                                  "control flow (Paddle 1.8 refuses it too)" % op.type)


def append_recomputed_op(block, op, rename):
    """Append a copy of forward `op` that writes (and reads) the renamed variables, in the backward role."""
    for n in op.output_arg_names:
        new = rename.get(n)
        if new is not None and not block.has_var(new):
            v = block._var_recursive(n)
            block.create_var(name=new, shape=v.shape, dtype=v.dtype, lod_level=v.lod_level, type=v.type,
                             persistable=False, stop_gradient=v.stop_gradient)
    attrs = dict(op.attrs)
    attrs[OP_ROLE_KEY] = OpRole.Backward
    copy = block.append_op(type=op.type,
                           inputs={s: [rename.get(n, n) for n in ns] for s, ns in op.inputs.items()},
                           outputs={s: [rename.get(n, n) for n in ns] for s, ns in op.outputs.items()},
                           attrs=attrs)
    copy.callsite = op.callsite
    return copy
