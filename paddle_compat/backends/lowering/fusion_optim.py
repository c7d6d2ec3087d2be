"""Lowering-time grouping of optimizer ops: a run of consecutive `momentum` (or `sgd`) ops that share their
settings and learning-rate variable becomes one multi-tensor update, as torch's foreach optimizers do.

minimize() appends one optimizer op per parameter, back to back; lowered one by one each pays its own kernel
call, its own read of the learning rate and (on a GPU) its own launches. A group reads the learning rate once
and updates every parameter of the run: on a GPU with torch's _foreach_* kernels (a few launches for the whole
group), on the CPU with one loop over per-tensor calls (foreach falls back to such a loop there anyway).

Like fusion.py this is a plan for the code generator: the Program keeps Paddle's ops. A group is a maximal
run of adjacent ops of one type (nothing in between, so no other op can see a half-updated state) with the
same attributes (mu; no Nesterov) and LearningRate, each updating its own parameter in place (ParamOut is
Param, VelocityOut is Velocity), whose parameters, gradients and velocities are all distinct.
"""

from ...ir import Operator, is_autograd_op

FUSED_MOMENTUM = "fused_momentum_group"
FUSED_SGD = "fused_sgd_group"

# op type -> (fused type, per-member input slots, per-member output slots, in-place pairs, attrs that must agree):
# the ops this pass has a grouped kernel for, and how it groups them (its own plan, not facts of the ops)
_GROUPABLE = {
    "momentum": (FUSED_MOMENTUM, ("Param", "Grad", "Velocity"), ("ParamOut", "VelocityOut"),
                 (("Param", "ParamOut"), ("Velocity", "VelocityOut")), ("mu",)),
    "sgd": (FUSED_SGD, ("Param", "Grad"), ("ParamOut",), (("Param", "ParamOut"),), ()),
}


def _member_ok(op, in_slots, out_slots, pairs):
    if is_autograd_op(op):
        return False
    for s in in_slots + ("LearningRate",):
        if len(op.inputs.get(s, [])) != 1:
            return False
    for s in out_slots:
        if len(op.outputs.get(s, [])) != 1:
            return False
    if any(op.input(a) != op.output(b) for a, b in pairs):
        return False
    return not (op.type == "momentum" and op.attrs.get("use_nesterov", False))


def _key(op, attrs):
    return (op.type, op.input("LearningRate")[0]) + tuple(float(op.attrs.get(a, 0.0)) for a in attrs)


def plan(block, skip=()):
    """{op index: replacement Operator, or None to skip that op} for the optimizer groups of `block`.
    skip: op indices another plan already replaces."""
    ops = block.ops
    replace = {}
    i = 0
    while i < len(ops):
        spec = _GROUPABLE.get(ops[i].type)
        if spec is None or i in skip or not _member_ok(ops[i], spec[1], spec[2], spec[3]):
            i += 1
            continue
        key = _key(ops[i], spec[4])
        j = i + 1
        seen = set(ops[i].input_arg_names)
        while j < len(ops) and j not in skip and ops[j].type == ops[i].type and \
                _member_ok(ops[j], spec[1], spec[2], spec[3]) and _key(ops[j], spec[4]) == key:
            names = [ops[j].input(s)[0] for s in spec[1]]
            if seen.intersection(names):     # a member reads what an earlier member updates (or shares it)
                break
            seen.update(names)
            j += 1
        if j - i >= 2:
            for k in range(i, j - 1):
                replace[k] = None
            replace[j - 1] = _group(block, ops[i:j], spec)   # runs where the last member ran
        i = j
    return replace


def _group(block, members, spec):
    fused_type, in_slots, out_slots, _, attrs = spec
    first = members[0]
    inputs = {s: [m.input(s)[0] for m in members] for s in in_slots}
    inputs["LearningRate"] = first.input("LearningRate")
    outputs = {s: [m.output(s)[0] for m in members] for s in out_slots}
    fused_attrs = {a: first.attrs.get(a) for a in attrs}
    fused_attrs["fused_from"] = "%d %s" % (len(members), first.type)
    return Operator(block, fused_type, inputs=inputs, outputs=outputs, attrs=fused_attrs, callsite=first.callsite)
