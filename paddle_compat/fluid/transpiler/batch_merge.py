"""Paddle 1.8's multi_batch_merge_pass as a Program rewrite: the forward and backward ops run `num_repeats`
times per step, each repeat's parameter gradients are summed, scaled by 1/num_repeats and handed to the
optimize ops, which run once (gradient accumulation; Paddle's test_dist_mnist_batch_merge uses it).

As in Paddle, the repeats share the fed variables and the parameters (only ops that read a reader, such as
`read`, see new data per repeat), so with plain feeds each repeat computes the same gradient.  Paddle also
renames batch_norm's running mean/variance per repeat; here the repeats share them (each repeat updates the
statistics in turn, as consecutive batches would)."""

from ...ir import GRAD_SUFFIX, OP_ROLE_KEY, OP_ROLE_VAR_KEY, OpRole

__all__ = ["merge_batches"]

_KEEP_ONCE = OpRole.Optimize | OpRole.LRSched | OpRole.RPC | OpRole.Dist


def merge_batches(program, num_repeats):
    """A copy of `program` whose forward + backward ops run `num_repeats` times per step."""
    if not isinstance(num_repeats, int) or isinstance(num_repeats, bool) or num_repeats < 1:
        raise ValueError("multi_batch_merge_pass: num_repeats must be a positive int, got %r" % (num_repeats,))
    prog = program.clone()
    if num_repeats == 1:
        return prog
    block = prog.global_block()
    ops = list(block.ops)
    roles = [op.attrs.get(OP_ROLE_KEY, 0) for op in ops]
    fb = [i for i, r in enumerate(roles) if not r & _KEEP_ONCE]
    if not fb:
        raise ValueError("multi_batch_merge_pass: the program has no forward/backward ops to repeat")
    first, last, fb_set = fb[0], fb[-1], set(fb)
    # ops recorded among the forward/backward that run once per step (LR schedules) go before the repeats
    once = [i for i in range(last + 1) if i not in fb_set]
    if any(roles[i] & (OpRole.Optimize | OpRole.RPC | OpRole.Dist) for i in once if i > first):
        raise NotImplementedError("multi_batch_merge_pass: optimize or RPC ops sit between the forward/backward "
                                  "ops; the pass needs them after the backward")
    grads = []   # (param, grad) pairs the backward produces
    for i in fb:
        rv = ops[i].attrs.get(OP_ROLE_VAR_KEY) or []
        for p, g in zip(rv[0::2], rv[1::2]):
            if (p, g) not in grads and g.endswith(GRAD_SUFFIX):
                grads.append((p, g))
    if not grads:
        raise ValueError("multi_batch_merge_pass: the program has no parameter gradients (call minimize first)")
    accs = {}
    for p, g in grads:
        gv = block.var(g)
        accs[g] = block.create_var(name=g[: -len(GRAD_SUFFIX)] + ".batch_merge_sum", shape=gv.shape,
                                   dtype=gv.dtype, persistable=False).name
    block.ops = [ops[i] for i in once]
    for r in range(num_repeats):
        for i in fb:
            block.ops.append(ops[i].copy_to(block) if r else ops[i])
        for p, g in grads:
            acc = accs[g]
            # not an autograd op (the accumulator has no @GRAD): ordinary ops between the repeats
            attrs = {OP_ROLE_KEY: int(OpRole.Backward), OP_ROLE_VAR_KEY: [p, g]}
            if r == 0:
                block.append_op(type="assign", inputs={"X": [g]}, outputs={"Out": [acc]}, attrs=attrs)
            else:
                block.append_op(type="sum", inputs={"X": [acc, g]}, outputs={"Out": [acc]}, attrs=attrs)
    for p, g in grads:
        block.append_op(type="scale", inputs={"X": [accs[g]]}, outputs={"Out": [g]},
                        attrs={"scale": 1.0 / num_repeats, "bias": 0.0, "bias_after_scale": True,
                               OP_ROLE_KEY: int(OpRole.Backward), OP_ROLE_VAR_KEY: [p, g]})
    block.ops.extend(ops[last + 1:])
    prog._bump()
    return prog
