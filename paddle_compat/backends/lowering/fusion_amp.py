"""Lowering-time fusion of contrib.mixed_precision's dynamic loss-scaling check: per gradient an
elementwise_div by the loss scaling and a reduce_sum, then concat, reduce_sum, isfinite, logical_not and
update_loss_scaling (the ops decorate() appends, back to back, as Paddle 1.8.5's apply_gradients does) become one
op: the gradients divided as a group (torch's _foreach_div), the finiteness decided without the per-gradient
sums where it provably cannot differ from theirs (kernels/fused_ops.py), and a bad step's gradients zeroed as a group.

Like fusion.py this is a plan for the code generator: the Program keeps Paddle's ops. The run fuses when it is
exactly that contiguous sequence (k divisions, then their k sums in the same order, concat, reduce_sum over
everything, isfinite, logical_not, update_loss_scaling whose X and Out are the k quotients), every division
divides by update_loss_scaling's PrevLossScaling, and the sums, the concat, the total and isfinite's flag are
read by nothing else (no other op, no fetch, not persistable). The quotients and logical_not's flag are still
written (the optimizer reads the quotients; the flag may be fetched).
"""

from ...ir import is_autograd_op
from ...ir import Operator

FUSED_AMP_CHECK = "fused_amp_unscale_check_update"


def _only(op, slot, kind="input"):
    names = op.input(slot) if kind == "input" else op.output(slot)
    return names[0] if len(names) == 1 else None


def plan(block, readers, fetch, skip=()):
    """{op index: replacement Operator, or None to skip that op}. readers: var -> indices of the ordinary
    (non-gradient) ops reading it."""
    ops = block.ops
    replace = {}
    for u, upd in enumerate(ops):
        if upd.type != "update_loss_scaling" or is_autograd_op(upd):
            continue
        quots = upd.input("X")
        k = len(quots)
        first = u - 4 - 2 * k
        if k == 0 or first < 0 or upd.output("Out") != quots or any(i in skip for i in range(first, u + 1)):
            continue
        span = ops[first:u + 1]
        if any(is_autograd_op(o) for o in span):
            continue
        divs, sums = span[:k], span[k:2 * k]
        cat, total, isf, lnot = span[2 * k:2 * k + 4]
        scale = _only(upd, "PrevLossScaling")
        if cat.type != "concat" or total.type != "reduce_sum" or isf.type != "isfinite" or \
                lnot.type != "logical_not" or _only(lnot, "Out", "output") != _only(upd, "FoundInfinite"):
            continue
        if _only(isf, "Out", "output") != _only(lnot, "X") or _only(total, "Out", "output") != _only(isf, "X") or \
                _only(cat, "Out", "output") != _only(total, "X") or not total.attrs.get("reduce_all", False):
            continue
        sum_outs = [_only(s, "Out", "output") for s in sums]
        if cat.input("X") != sum_outs or int(cat.attrs.get("axis", 0)) != 0:
            continue
        ok = True
        for j, (d, s) in enumerate(zip(divs, sums)):
            if d.type != "elementwise_div" or _only(d, "Y") != scale or _only(d, "Out", "output") != quots[j] or \
                    _only(d, "X") is None or s.type != "reduce_sum" or not s.attrs.get("reduce_all", False) or \
                    _only(s, "X") != quots[j]:
                ok = False
                break
        if not ok:
            continue
        # what the fused op no longer writes must be read by nothing but the next op of the chain
        inner = [(n, first + k + j, first + 2 * k) for j, n in enumerate(sum_outs)]
        inner += [(_only(cat, "Out", "output"), first + 2 * k, first + 2 * k + 1),
                  (_only(total, "Out", "output"), first + 2 * k + 1, first + 2 * k + 2),
                  (_only(isf, "Out", "output"), first + 2 * k + 2, first + 2 * k + 3)]
        if any(n is None or n in fetch or readers.get(n) != [reader] or _persistable(block, n)
               for n, _, reader in inner):
            continue
        for i in range(first, u):
            replace[i] = None
        replace[u] = Operator(
            block, FUSED_AMP_CHECK,
            inputs={"X": [_only(d, "X") for d in divs], "PrevLossScaling": [scale],
                    "InGoodSteps": upd.input("InGoodSteps"), "InBadSteps": upd.input("InBadSteps")},
            outputs={"Out": list(quots), "FoundInfinite": [_only(lnot, "Out", "output")],
                     "LossScaling": upd.output("LossScaling"), "OutGoodSteps": upd.output("OutGoodSteps"),
                     "OutBadSteps": upd.output("OutBadSteps")},
            attrs=dict(upd.attrs, fused_from="%d elementwise_div + %d reduce_sum + concat, reduce_sum, isfinite, "
                                             "logical_not, update_loss_scaling" % (k, k)),
            callsite=upd.callsite)
    return replace


def _persistable(block, name):
    v = block._find_var_recursive(name)
    return v is not None and v.persistable
