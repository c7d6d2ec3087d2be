"""Split a training program at the end of its backward pass, for several places in one process.

Each place runs the *compute* part (forward + backward) on its share of the batch; the runner averages the
parameter gradients across places (and trainers); each place then runs the *apply* part (clip, regularizer,
optimizer, whatever follows) on its own copy of the persistables, fed the averaged gradients and the
compute part's other values it reads. This is Paddle's ParallelExecutor, which kept one copy of every
persistable per place and inserted the allreduce between backward and optimizer ops.

A pure pass: the given program is not modified.
"""

from ..ir import GRAD_SUFFIX, Parameter, is_autograd_op, notify_changed, role_var_params

__all__ = ["StepSplit", "split_step"]


class StepSplit:
    __slots__ = ("compute", "apply", "iface", "grads", "apply_outputs")

    def __init__(self, compute, apply, iface, grads, apply_outputs):
        self.compute = compute              # Program: ops up to the last grad op
        self.apply = apply                  # Program or None (nothing after the backward)
        self.iface = tuple(iface)           # non-persistable names the apply part reads from compute or feed
        self.grads = tuple(grads)           # parameter gradients among them: averaged across places
        self.apply_outputs = frozenset(apply_outputs)


def split_step(program):
    ops = program.global_block().ops
    last = max((i for i, op in enumerate(ops) if is_autograd_op(op)), default=-1)
    if last < 0 or last == len(ops) - 1:
        return StepSplit(program, None, (), (), ())
    cut = last + 1
    compute = program.clone()
    compute.global_block()._remove_op(cut, len(ops))
    apply = program.clone()
    ab = apply.global_block()
    ab._remove_op(0, cut)
    produced, iface = set(), []
    for op in ab.ops:
        for n in op.input_arg_names:
            if n in produced or n in iface:
                continue
            v = ab._find_var_recursive(n)
            if v is not None and not v.persistable:
                iface.append(n)
        produced.update(op.output_arg_names)
    for n in iface:   # they are fed into the apply part
        ab.var(n).is_data = True
    named = role_var_params(program.global_block())    # a parsed program has no Parameter objects
    grads = [n for n in iface if n.endswith(GRAD_SUFFIX) and (n[: -len(GRAD_SUFFIX)] in named or
             isinstance(ab._find_var_recursive(n[: -len(GRAD_SUFFIX)]), Parameter))]
    notify_changed(compute, "split_step compute")
    notify_changed(apply, "split_step apply")
    return StepSplit(compute, apply, iface, grads, produced)
