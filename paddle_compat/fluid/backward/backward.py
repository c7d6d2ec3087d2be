"""append_backward / gradients: record Paddle's grad ops (`<type>_grad`, `<var>@GRAD` outputs, `sum` for
repeated uses) so a program shows what is computed and where each gradient lands.

The backend computes a whole run of these grad ops with one torch.autograd call (see
backends/lowering/autograd_region.py); their inputs here describe the dependency, not a kernel signature.
"""

import collections

from ...ir import (GRAD_SUFFIX, OP_ROLE_KEY, OP_ROLE_VAR_KEY, OpRole, Parameter, VarType, Variable, forward_name,
                   grad_var_name, notify_changed, unique_name as _unique_name)
from . import recompute as _recompute
from ...ops import (aliased_outputs, find as _find, info as _op_info, is_differentiable,
                    known_op_types as _known_op_types, no_grad_slots, protos as _protos)
from ...ir import is_autograd_op  # noqa: F401  (re-exported: the fact lives below front end and backends)

__all__ = ["append_backward", "gradients", "calc_gradient", "NON_DIFFERENTIABLE_OPS", "is_autograd_op"]

# Kept for scripts and tests that imported it from here; the facts live in each op's declaration
# (paddle_compat/ops/defs).
NON_DIFFERENTIABLE_OPS = frozenset(t for t in _known_op_types() if _find(t).differentiable is False)


def _names(xs):
    out = set()
    for x in xs or ():
        out.add(x.name if isinstance(x, Variable) else x)
    return out


def _check_var_collection(value, what, api):
    """Paddle's argument checks: a set/list/tuple of Variables or names, else TypeError naming `what`."""
    if value is None:
        return
    if not isinstance(value, (set, list, tuple)):
        raise TypeError("%s: %s must be a set, list or tuple of Variables or names, got %s"
                        % (api, what, type(value).__name__))
    for i, v in enumerate(value):
        if not isinstance(v, (Variable, str)):
            raise TypeError("%s: %s[%d] must be a Variable or a name, got %s" % (api, what, i, type(v).__name__))


def _check_type(value, what, types, api):
    if not isinstance(value, types):
        raise TypeError("%s: %s must be %s, got %s"
                        % (api, what, " or ".join(t.__name__ for t in types), type(value).__name__))


def _append_grad_suffix_(name):
    """x -> x@GRAD (Paddle's helper, used by its tests and scripts)."""
    return str(name) + GRAD_SUFFIX


def _strip_grad_suffix_(name):
    """x@GRAD -> x, y@GRAD@RENAME@1 -> y."""
    name = str(name)
    pos = name.find(GRAD_SUFFIX)
    return name[:pos] if pos != -1 else name


def _find_op_path_(block, outputs, inputs, no_grad_set):
    """Paddle's op-path search: the ops of `block` on a path from `inputs` (all, if none) to `outputs` that
    have a gradient.  With inputs, adds to `no_grad_set` the stop_gradient inputs off that path."""
    input_names = {v.name for v in inputs}
    output_names = {v.name for v in outputs}
    relevant = [True] * len(block.ops)
    if inputs:
        for i, op in enumerate(block.ops):
            if input_names.intersection(op.input_arg_names) and is_differentiable(op.type):
                input_names.update(n for n in op.output_arg_names if n not in no_grad_set)
            else:
                relevant[i] = False
    for i in reversed(range(len(block.ops))):
        op = block.ops[i]
        if output_names.intersection(op.output_arg_names) and is_differentiable(op.type):
            output_names.update(n for n in op.input_arg_names if n not in no_grad_set)
        else:
            relevant[i] = False
    path = [op for op, keep in zip(block.ops, relevant) if keep]
    if inputs:
        for op in path:
            for n in op.input_arg_names:
                if n not in input_names and block._var_recursive(n).stop_gradient:
                    no_grad_set.add(n)
    return path


def _find_no_grad_vars(block, op_path, targets, no_grad_set):
    """Outputs on the op path that nothing downstream uses (and that are not stop_gradient): their
    gradients are never produced, so Paddle treats them as no-grad."""
    output_names = {v.name for v in targets}
    no_grad = set()
    for op in reversed(op_path):
        if "sub_block" not in op.attrs:
            for n in op.output_arg_names:
                if (n not in output_names and n not in op.input_arg_names
                        and not block._var_recursive(n).stop_gradient):
                    no_grad.add(n)
        output_names.update(n for n in op.input_arg_names if n not in no_grad_set)
    return no_grad


def _get_stop_gradients_(program):
    """{block idx: {v@GRAD for every stop_gradient var of the block}}, as Paddle's backward starts from."""
    return {block.idx: {_append_grad_suffix_(v.name) for v in block.vars.values() if v.stop_gradient}
            for block in program.blocks}


def _op_path(block, targets, end_idx):
    """Ops (in order) up to end_idx that the targets depend on."""
    needed = set(targets)
    path = []
    for op in reversed(block.ops[:end_idx]):
        if needed.intersection(op.output_arg_names):
            path.append(op)
            needed.update(op.input_arg_names)
    path.reverse()
    return path


def _grad_inputs(op):
    """Input names of `op` that may receive gradient (its definition's no-grad slots left out)."""
    skip = no_grad_slots(op.type)
    if not skip:
        return op.input_arg_names
    return [n for slot, names in op.inputs.items() if slot not in skip for n in names]


def _grad_flow(block, path, no_grad, params_only_trainable=True):
    """Names of variables through which gradient flows (leaves that want grads, and what they reach). As
    in Paddle, a variable that is not stop_gradient gets a gradient even when what made it carries none
    (fill_constant's output with stop_gradient set False, 2 * a data variable): it is a leaf of this
    backward, made one where it is computed (backends/lowering/plan.py, mid_leaves)."""
    produced = set()
    for op in path:
        produced.update(set(op.output_arg_names) - aliased_outputs(op))
    flows = set()
    made = set()                      # produced by an op seen so far
    for op in path:
        if not is_differentiable(op.type):
            made.update(op.output_arg_names)
            continue
        hit = False
        for n in _grad_inputs(op):
            if n in no_grad:
                continue
            if n in flows:
                hit = True
            elif n not in produced or n in made or n in op.output_arg_names:
                v = block._find_var_recursive(n)
                if v is None or v.stop_gradient:
                    continue
                if isinstance(v, Parameter) and not v.trainable:
                    continue
                if v.dtype not in (VarType.FP32, VarType.FP64, VarType.FP16, VarType.BF16):
                    continue
                flows.add(n)
                hit = True
        made.update(op.output_arg_names)
        if hit:
            for n in op.output_arg_names:
                v = block._find_var_recursive(n)
                if n not in no_grad and v is not None and not v.stop_gradient and \
                        v.dtype in (VarType.FP32, VarType.FP64, VarType.FP16, VarType.BF16):
                    flows.add(n)
    return flows


def _append_grad_ops(block, path, flows, seeds, renames=None):
    """Append `<type>_grad` ops for `path` in reverse; returns the forward names whose @GRAD exists."""
    have_grad, grad_ops = _record_grad_ops(block, path, flows, seeds, renames)
    _add_up_repeated_grads(block, grad_ops)
    return have_grad


def _record_grad_ops(block, path, flows, seeds, renames=None):
    """The grad ops of `path` (ops of any block) appended to `block`, repeated contributions not yet
    summed; returns (forward names whose @GRAD exists, the grad ops)."""
    have_grad = set(seeds)            # forward vars whose @GRAD exists so far
    grad_ops = []
    for op in reversed(path):
        gop = _append_grad_op(block, op, flows, have_grad, renames=renames)
        if gop is not None:
            grad_ops.append(gop)
    return have_grad, grad_ops


def _append_grad_op(block, op, flows, have_grad, rename=None, renames=None):
    """Append the `<type>_grad` op of `op` (or nothing, when no gradient passes through it) and add the
    inputs it gives gradient to `have_grad`. rename: {forward name: name the grad op reads instead} (the
    recomputed copies of a recompute segment); gradient names keep the forward names."""
    if not is_differentiable(op.type):
        return None
    out_with_grad = [n for n in op.output_arg_names if n in have_grad]
    in_need = [n for n in _grad_inputs(op) if n in flows]
    if not out_with_grad or not in_need:
        return None
    if op.type == "print":
        return _append_print_grad(block, op, have_grad, in_need, rename, renames)
    if op.type == "cross_entropy2":
        return _append_cross_entropy2_grad(block, op, have_grad, in_need, rename, renames)
    rn = (lambda names: [rename.get(n, n) for n in names]) if rename else list
    inputs = collections.OrderedDict()
    for slot, names in op.inputs.items():
        inputs[slot] = rn(names)
    for slot, names in op.outputs.items():
        inputs[slot] = rn(names)
        g = [grad_var_name(n) for n in names if n in have_grad]
        if g:
            inputs[slot + GRAD_SUFFIX] = g
    outputs = collections.OrderedDict()
    skip = no_grad_slots(op.type)
    for slot, names in op.inputs.items():
        g = [grad_var_name(n) for n in names if n in flows and slot not in skip]
        if g:
            outputs[slot + GRAD_SUFFIX] = g
    if renames is not None:
        renames.apply(op, inputs, outputs)
    attrs = {k: v for k, v in op.attrs.items() if k not in (OP_ROLE_KEY, OP_ROLE_VAR_KEY)}
    attrs[OP_ROLE_KEY] = OpRole.Backward
    gop = block.append_op(type=op.type + "_grad", inputs=inputs, outputs=outputs, attrs=attrs)
    kept = _protos.grad_op_attrs(op.type)
    if kept is not None:
        # Paddle's grad maker for this op copies only these attributes (mean_grad: none), and its backward adds
        # the role and the device
        gop.attrs = {k: v for k, v in gop.attrs.items() if k in kept}
        gop.attrs.update({OP_ROLE_KEY: OpRole.Backward, "op_device": op.attrs.get("op_device", "")})
    gop.callsite = op.callsite
    have_grad.update(in_need)
    return gop


def _append_print_grad(block, op, have_grad, in_need, rename, renames):
    """Paddle's grad maker of print: another print, of the gradient (In: Out@GRAD, Out: In@GRAD, is_forward
    False), which prints it in the backward phase. Not a grad op for the lowering: it runs as an ordinary op
    between two autograd calls, the second seeded by what it writes."""
    inputs = {"In": [grad_var_name(n) for n in op.output("Out")]}
    outputs = {"Out": [grad_var_name(n) for n in op.input("In")]}
    if renames is not None:
        renames.apply(op, inputs, outputs)
    attrs = {k: v for k, v in op.attrs.items() if k not in (OP_ROLE_KEY, OP_ROLE_VAR_KEY)}
    attrs.update({"is_forward": False, OP_ROLE_KEY: OpRole.Backward})
    gop = block.append_op(type="print", inputs=inputs, outputs=outputs, attrs=attrs)
    gop.callsite = op.callsite
    have_grad.update(in_need)
    return gop


def _append_cross_entropy2_grad(block, op, have_grad, in_need, rename, renames):
    """Paddle's grad maker of cross_entropy2: cross_entropy_grad2 (its one grad type not ending in _grad)
    reading Label, MatchX, XShape and Y@GRAD, writing X@GRAD (the label takes no gradient)."""
    rn = (lambda names: [rename.get(n, n) for n in names]) if rename else list
    inputs = collections.OrderedDict([("Label", rn(op.input("Label"))), ("MatchX", rn(op.output("MatchX"))),
                                      ("XShape", rn(op.output("XShape"))),
                                      ("Y" + GRAD_SUFFIX, [grad_var_name(n) for n in op.output("Y")])])
    outputs = collections.OrderedDict([("X" + GRAD_SUFFIX, [grad_var_name(n) for n in op.input("X")])])
    if renames is not None:
        renames.apply(op, inputs, outputs)
    attrs = {k: v for k, v in op.attrs.items() if k not in (OP_ROLE_KEY, OP_ROLE_VAR_KEY)}
    attrs[OP_ROLE_KEY] = OpRole.Backward
    gop = block.append_op(type="cross_entropy_grad2", inputs=inputs, outputs=outputs, attrs=attrs)
    gop.callsite = op.callsite
    have_grad.update(in_need)
    return gop


def _append_recompute_ops(block, steps, flows, seeds):
    """The backward section planned by backward_recompute.plan: grad ops with recomputed forward copies."""
    have_grad = set(seeds)
    grad_ops = []
    for kind, op, rename in steps:
        if kind == "forward":
            _recompute.append_recomputed_op(block, op, rename)
            continue
        gop = _append_grad_op(block, op, flows, have_grad, rename)
        if gop is not None:
            grad_ops.append(gop)
    _add_up_repeated_grads(block, grad_ops)
    return have_grad


def _add_up_repeated_grads(block, grad_ops, var_block=None):
    """A variable used by several ops gets one contribution per use: rename them and `sum` them right
    after the last contribution (Paddle's @RENAME@ scheme)."""
    producers = collections.defaultdict(list)
    for i, gop in enumerate(grad_ops):
        for slot, names in gop.outputs.items():
            for j, n in enumerate(names):
                producers[n].append((i, slot, j))
    inserts = []
    for name, occ in producers.items():
        if len(occ) < 2:
            continue
        parts = []
        for k, (i, slot, j) in enumerate(occ):
            new = "%s@RENAME@block%d@%d" % (name, block.idx, k)
            grad_ops[i].outputs[slot][j] = new
            parts.append(new)
        inserts.append((max(i for i, _, _ in occ), name, parts))
    # insert from the back so earlier positions stay valid
    for last, name, parts in sorted(inserts, key=lambda t: -t[0]):
        pos = block.ops.index(grad_ops[last]) + 1
        block._insert_op(pos, type="sum", inputs={"X": parts}, outputs={"Out": [name]},
                         attrs={OP_ROLE_KEY: OpRole.Backward, "use_mkldnn": False})
    for _, name, parts in inserts:
        fwd = (var_block or block)._find_var_recursive(forward_name(name))
        for p in parts:
            _create_grad_var(block, p, fwd)


def _create_grad_var(block, gname, fwd, sparse=False):
    if block.has_var(gname):
        return block.var(gname)
    return block.create_var(name=gname, shape=fwd.shape if fwd is not None else (),
                            dtype=fwd.dtype if fwd is not None else VarType.FP32,
                            lod_level=fwd.lod_level if fwd is not None else 0,
                            type=VarType.SELECTED_ROWS if sparse else VarType.LOD_TENSOR)


def _sparse_grad_params(block, path):
    out = set()
    for op in path:
        # the input slot whose gradient is row-sparse (SelectedRows) when the op has is_sparse=True
        slot = _op_info(op.type).sparse_grad_slot
        if slot is not None and op.attrs.get("is_sparse"):
            out.update(op.input(slot))
    return out


class _Renames:
    """A later fluid.gradients over a block that already holds gradients (a gradient of a gradient) names
    the gradients it writes apart from those, as Paddle 1.8 does: an @GRAD output already in the block
    becomes 'grad/' * k + name (k: the program's backward count), and a grad op of a forward op reads the
    renamed gradient; a seed y@GRAD already in the block becomes a unique y@GRAD_<n>, read under that name
    by every grad op of this backward. Without it the second backward would overwrite the first one's
    x@GRAD, which its own forward ops read."""

    def __init__(self, block, times):
        self.block, self.prefix = block, "grad/" * times
        self.map, self.seeds = {}, {}

    def seed_name(self, gname):
        if self.block.has_var(gname):
            self.seeds[gname] = _unique_name.generate(gname)
        return self.seeds.get(gname, gname)

    def apply(self, op, inputs, outputs):
        of_grad_op = bool(op.attrs.get(OP_ROLE_KEY, 0) & OpRole.Backward)
        for slot, names in inputs.items():
            names = [self.seeds.get(n, n) for n in names]
            inputs[slot] = names if of_grad_op else [self.map.get(n, n) for n in names]
        for slot, names in outputs.items():
            new = []
            for n in names:
                if GRAD_SUFFIX in n and self.block.has_var(n):
                    self.map[n] = self.prefix + n
                new.append(self.map.get(n, n))
            outputs[slot] = new

    def grad_of(self, name):
        g = grad_var_name(name)
        return self.seeds.get(g, self.map.get(g, g))


def _backward(block, targets, seeds_from, no_grad_set, checkpoints=None, renames=None, inputs=None):
    """Shared core of append_backward and gradients. `seeds_from(target)` appends the seed op.
    checkpoints: names of the variables between which forward segments are recomputed (see
    backward_recompute). renames: a _Renames (a later fluid.gradients). inputs: fluid.gradients' inputs, whose
    backward records only the ops between them and the targets (Paddle's _find_op_path_)."""
    target_names = [t.name for t in targets]
    end = max(i for i, op in enumerate(block.ops) if set(target_names) & set(op.output_arg_names)) + 1
    no_grad = _names(no_grad_set)
    for v in block.program.list_vars():
        if v.stop_gradient and not isinstance(v, Parameter):
            no_grad.add(v.name)
    path = _op_path(block, target_names, end)
    if inputs is not None:
        reached = set(inputs)
        kept = []
        for op in path:
            if reached.intersection(op.input_arg_names):
                reached.update(op.output_arg_names)
                kept.append(op)
        path = kept
    if checkpoints:
        path = _recompute.insert_dropout_seeds(block, path)
    flows = _grad_flow(block, path, no_grad)
    for t in targets:
        seeds_from(t)
    if checkpoints:
        have = _append_recompute_ops(block, _recompute.plan(block, path, checkpoints), flows, set(target_names))
    else:
        have = _append_grad_ops(block, path, flows, set(target_names), renames)
    sparse = _sparse_grad_params(block, path)
    for n in _in_grad_op_order(block, have, renames):
        fwd = block._find_var_recursive(n)
        _create_grad_var(block, renames.grad_of(n) if renames else grad_var_name(n), fwd, sparse=n in sparse)
    return have


def _in_grad_op_order(block, names, renames=None):
    """`names` (a set) in the order their @GRAD first appears as a grad op output in `block`, as Paddle
    creates grad vars; iterating the set itself would make the program's variable order (and its saved
    bytes) depend on PYTHONHASHSEED."""
    first = {}
    for op in block.ops:
        for n in op.output_arg_names:
            base = n.split("@RENAME@")[0]
            if base.endswith(GRAD_SUFFIX):
                first.setdefault(forward_name(base) if renames else base[: -len(GRAD_SUFFIX)], len(first))
    return sorted(names, key=lambda n: (first.get(n, -1), n))


def _append_loss_seed(block, name, dtype):
    """d loss / d loss = 1. Paddle's backward writes this fill_constant as a bare OpDesc: these attributes only
    (none of the checker's defaults, no name scope or call stack)."""
    op = block.desc.append_op()
    op.set_type("fill_constant")
    op.set_output("Out", [name])
    for k, v in (("shape", [1]), ("value", 1.0), ("dtype", int(dtype)), ("force_cpu", False),
                 (OP_ROLE_KEY, OpRole.Backward | OpRole.Loss), ("op_device", "")):
        op._set_attr(k, v)


def append_backward(loss, parameter_list=None, no_grad_set=None, callbacks=None, checkpoints=None):
    """Append the backward of `loss` (a [1] Variable) to its block; returns [(param, param@GRAD)]."""
    if not isinstance(loss, Variable):
        raise TypeError("append_backward: loss must be a Variable, got %s" % type(loss).__name__)
    _check_var_collection(parameter_list, "parameter_list", "append_backward")
    _check_var_collection(no_grad_set, "no_grad_set", "append_backward")
    if callbacks is not None:
        _check_type(callbacks, "callbacks", (list,), "append_backward")
    program = loss.block.program
    block = program.global_block()
    if loss.op is not None:
        loss.op._set_attr(OP_ROLE_KEY, OpRole.Forward | OpRole.Loss)
    if program.current_block_idx != 0:
        return _append_backward_in_sub_block(loss, parameter_list, no_grad_set)
    # counted as Paddle counts backwards (not those in a sub-block): a later one names the gradients it
    # writes apart from those already in the block (_Renames)
    program._appending_grad_times = getattr(program, "_appending_grad_times", 0) + 1
    renames = _Renames(block, program._appending_grad_times) if program._appending_grad_times > 1 else None

    def seed(t):
        _append_loss_seed(block, grad_var_name(t.name), t.dtype)
        _create_grad_var(block, grad_var_name(t.name), t)

    # Paddle recomputes only for a non-empty list of checkpoints (anything else means plain backward)
    names = [c.name if isinstance(c, Variable) else c for c in checkpoints] \
        if isinstance(checkpoints, list) else None
    have = _backward(block, [loss], seed, no_grad_set, checkpoints=names, renames=renames)
    if parameter_list is not None:
        # in parameter_list's order, as Paddle returns them (Paddle's op tests zip them with their inputs)
        wanted = list(dict.fromkeys(p.name if isinstance(p, Variable) else p for p in parameter_list))
        params = [block.var(n) for n in wanted if block.has_var(n)]
    else:
        params = [p for p in block.all_parameters() if p.trainable]
    params_grads = []
    for p in params:
        if p.name in have and p.name != loss.name:
            params_grads.append((p, block.var(renames.grad_of(p.name) if renames else grad_var_name(p.name))))
    _set_op_role_var(block, params_grads)
    notify_changed(program, "append_backward")
    return params_grads


def _linked_names(block, loss):
    """Names in `block` that the loss depends on: the loss itself when it is recorded there; when it is
    recorded in a sub-block of `block`, the outer variables the ops leading to it read (Paddle's
    _get_output_names); none when `block` is not the loss's block or an ancestor of it."""
    b, names = loss.block, {loss.name}
    while b.idx != block.idx:
        if b.parent is None:
            return set()
        for op in reversed(b.ops):
            if names.intersection(op.output_arg_names):
                names.update(op.input_arg_names)
        names = {n for n in names if n not in b.vars}
        b = b.parent
    return names


def _append_backward_in_sub_block(loss, parameter_list, no_grad_set):
    """append_backward while a sub-block is current (optimizer.minimize inside a cond branch), as Paddle
    1.8 does it: the grad ops go to a new block beside the current one (same parent, forward_block_idx =
    the current block): first those of the current block's ops, then those of each enclosing block's ops
    the loss depends on. The optimizer appends its ops there too; the conditional_block owning the current
    block gets a conditional_block_grad that runs the new block (layers/control_flow.py). The current block
    stays current."""
    program = loss.block.program
    cur = program.current_block()
    grad_block = program._create_block(parent_idx=cur.parent_idx)
    grad_block._set_forward_block_idx(cur.idx)
    program.current_block_idx = cur.idx
    no_grad = _names(no_grad_set)
    for v in program.list_vars():
        if v.stop_gradient and not isinstance(v, Parameter):
            no_grad.add(v.name)
    seed = grad_var_name(loss.name)
    _append_loss_seed(grad_block, seed, loss.dtype)
    _create_grad_var(grad_block, seed, loss)
    have, grad_ops, sparse = {loss.name}, [], set()
    b = cur
    while b is not None:
        names = _linked_names(b, loss)
        if names:
            path = _op_path(b, names, len(b.ops))
            have, ops = _record_grad_ops(grad_block, path, _grad_flow(b, path, no_grad), have)
            grad_ops += ops
            sparse |= _sparse_grad_params(b, path)
        b = b.parent
    _add_up_repeated_grads(grad_block, grad_ops, var_block=cur)
    for n in _in_grad_op_order(grad_block, have):
        _create_grad_var(grad_block, grad_var_name(n), cur._find_var_recursive(n), sparse=n in sparse)
    gb = program.global_block()
    if parameter_list is not None:
        params = [gb.var(n) for n in _names(parameter_list) if gb.has_var(n)]
    else:
        params = [p for p in gb.all_parameters() if p.trainable]
    params_grads = [(p, grad_block.var(grad_var_name(p.name))) for p in params
                    if p.name in have and p.name != loss.name]
    _set_op_role_var(grad_block, params_grads)
    notify_changed(program, "append_backward")
    return params_grads


def _set_op_role_var(block, params_grads):
    by_grad = {g.name: p.name for p, g in params_grads}
    for op in block.ops:
        if not is_autograd_op(op):
            continue
        role_var = []
        for n in op.output_arg_names:
            base = n.split("@RENAME@")[0]
            if base in by_grad and n == base:
                role_var += [by_grad[base], base]
        if role_var:
            op.attrs[OP_ROLE_VAR_KEY] = role_var


def gradients(targets, inputs, target_gradients=None, no_grad_set=None):
    """d(sum of targets)/d(inputs): a list with one grad Variable (or None) per input."""
    _check_type(targets, "targets", (Variable, list), "gradients")
    _check_type(inputs, "inputs", (Variable, list), "gradients")
    _check_type(target_gradients, "target_gradients", (Variable, list, type(None)), "gradients")
    _check_var_collection(no_grad_set, "no_grad_set", "gradients")
    targets = [targets] if isinstance(targets, Variable) else list(targets)
    inputs = [inputs] if isinstance(inputs, Variable) else list(inputs)
    if target_gradients is not None:
        target_gradients = [target_gradients] if isinstance(target_gradients, Variable) else list(target_gradients)
        if len(target_gradients) != len(targets):
            raise ValueError("gradients: %d target_gradients for %d targets" % (len(target_gradients), len(targets)))
    program = targets[0].block.program
    block = program.global_block()
    tg = dict(zip([t.name for t in targets], target_gradients or [None] * len(targets)))
    program._appending_grad_times = getattr(program, "_appending_grad_times", 0) + 1
    renames = _Renames(block, program._appending_grad_times) if program._appending_grad_times > 1 else None

    def seed(t):
        gname = renames.seed_name(grad_var_name(t.name)) if renames else grad_var_name(t.name)
        _create_grad_var(block, gname, t)
        given = tg[t.name]
        if given is not None:
            block.append_op(type="assign", inputs={"X": [given]}, outputs={"Out": [gname]},
                            attrs={OP_ROLE_KEY: OpRole.Backward | OpRole.Loss})
        else:
            block.append_op(type="fill_any_like", inputs={"X": [t]}, outputs={"Out": [gname]},
                            attrs={"value": 1.0, OP_ROLE_KEY: OpRole.Backward | OpRole.Loss})

    # inputs the caller asks about must receive gradient even if they are data (stop_gradient) vars
    saved = [(v, v.stop_gradient) for v in inputs]
    for v in inputs:
        v._stop_gradient = False
    try:
        have = _backward(block, targets, seed, no_grad_set, renames=renames, inputs=[v.name for v in inputs])
    finally:
        for v, sg in saved:
            v._stop_gradient = sg
    notify_changed(block.program, "gradients")
    return [block.var(renames.grad_of(v.name) if renames else grad_var_name(v.name)) if v.name in have else None
            for v in inputs]


def calc_gradient(targets, inputs, target_gradients=None, no_grad_set=None):
    """fluid.gradients, except that one gradient comes back as itself, not in a list (Paddle 1.8)."""
    grads = gradients(targets, inputs, target_gradients, no_grad_set)
    return grads[0] if len(grads) == 1 else grads
