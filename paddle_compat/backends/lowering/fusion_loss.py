"""Lowering-time fusion of the classifier loss: `softmax` -> `cross_entropy2` (or `cross_entropy` with hard
labels) -> `mean`, what fc(act="softmax") + layers.cross_entropy + layers.mean write, becomes one op whose kernel
is one autograd node.

Lowered one by one the three ops are three autograd nodes, two of them Python ones (the clipped softmax and the
hard cross entropy), plus a label compare and masks and the mean's own node; on a small step (an MLP or CTR
tower, batch 32) their fixed costs are a tenth of the step. The fused kernel (kernels/fused_ops.py) calls the
same torch functions in the same order, forward and backward, so every number is the three ops' bit for bit.

Like fusion.py this is a plan for the code generator: the Program keeps Paddle's ops. The three fuse when they
are adjacent, the cross entropy takes hard labels over the softmax's last axis, and neither the softmax's output
nor the per-row loss is needed elsewhere: read by no other op, not fetched, not persistable, and their
gradients wanted by nobody outside the backward.
"""

from ...ir import GRAD_SUFFIX, Operator, is_autograd_op, is_recomputed_op

FUSED_SOFTMAX_CE_MEAN = "fused_softmax_cross_entropy_mean"


def plan(block, readers, fetch, skip=()):
    """{op index: replacement Operator, or None to skip that op}. readers: var -> indices of the ordinary
    (non-gradient) ops reading it."""
    ops = block.ops
    replace = {}
    for i in range(len(ops) - 2):
        sm, ce, mn = ops[i], ops[i + 1], ops[i + 2]
        # the pattern this pass fuses (its own plan, not a fact of the three ops)
        if (sm.type, mn.type) != ("softmax", "mean") or ce.type not in ("cross_entropy", "cross_entropy2") or \
                any(k in skip or k in replace for k in (i, i + 1, i + 2)) or \
                any(is_autograd_op(o) or is_recomputed_op(o) for o in (sm, ce, mn)):
            continue
        if ce.attrs.get("soft_label", False):
            continue
        y, loss = sm.output("Out"), ce.output("Y")
        if len(sm.input("X")) != 1 or len(y) != 1 or len(loss) != 1 or ce.input("X") != y or \
                mn.input("X") != loss or len(ce.input("Label")) != 1:
            continue
        x_var = block._find_var_recursive(sm.input("X")[0])
        if x_var is None or sm.attrs.get("axis", -1) not in (-1, len(x_var.shape) - 1):
            continue     # the cross entropy reads the last axis: a softmax over another one stays apart
        if not (_private(block, y[0], readers, fetch, i + 1) and _private(block, loss[0], readers, fetch, i + 2)):
            continue
        if any(not _unused(block, n, readers, fetch) for n in ce.output("MatchX") + ce.output("XShape")):
            continue     # cross_entropy2's side outputs (read by its grad op only, which autograd stands for)
        replace[i] = None
        replace[i + 1] = None
        replace[i + 2] = Operator(block, FUSED_SOFTMAX_CE_MEAN,
                                  inputs={"X": sm.input("X"), "Label": ce.input("Label")},
                                  outputs={"Out": mn.output("Out")},
                                  attrs={"ignore_index": ce.attrs.get("ignore_index", -100),
                                         "fused_from": "softmax + %s + mean" % ce.type},
                                  callsite=ce.callsite)
    return replace


def _unused(block, name, readers, fetch):
    """Whether no ordinary op reads `name`, it is not fetched and not persistable."""
    v = block._find_var_recursive(name)
    return not readers.get(name) and name not in fetch and not (v is not None and v.persistable)


def _private(block, name, readers, fetch, reader):
    """Whether `name` is read by op `reader` alone, and neither it nor its gradient is wanted elsewhere."""
    v = block._find_var_recursive(name)
    g = block._find_var_recursive(name + GRAD_SUFFIX)
    if v is None or v.persistable or name in fetch or readers.get(name) != [reader]:
        return False
    return not (readers.get(name + GRAD_SUFFIX) or name + GRAD_SUFFIX in fetch or (g is not None and g.persistable))
