"""Plan one block's lowering as data (plan_types.BlockPlan): which ops run in which order with which kernels,
the autograd regions, fused groups and pruned ops, what is read from and written to the scope, how LoD
flows, where values are cut from autograd, which locals are freed before the backward, what
FLAGS_check_nan_inf checks, and whether the step could run as one CUDA graph.

Each decision is a small function of the block (and of what the scope holds); `plan_block` chains them.
Nothing here builds a kernel, generates code or touches torch.
"""

from ...ir.dtypes import FLOAT_TYPES
from ...ops import aliased_outputs, is_differentiable
from ...ir import is_autograd_op, is_recomputed_op, updates_params
from . import fusion, nan_check
from .autograd_region import find_regions
from .capture_check import capture_verdict
from .ctx import missing_value
from .grad_lod import region_lod_shares
from .op_checks import kernel_of
from .plan_types import BlockPlan, FreeStep, OpStep, Ref, RegionStep

__all__ = ["plan_block", "schedule", "unread_recomputed", "later_backward_leaves", "grad_leaves", "mid_leaves",
           "entry_aliases", "detach_outputs", "lod_after", "scope_writes", "frees_before_backward", "unit_seed_fills",
           "Flow"]


def plan_block(program, block_idx, scope, feed_names=(), fetch_names=(), feed_lod=(), sub_block=False,
               shared_params=False, check_nan_inf=False, env=None, fuse=True, write_scope=True):
    """The BlockPlan of program.block(block_idx) run over `scope` with these feeds and fetches.
    sub_block: a control-flow body (keeps its caller's grad mode). check_nan_inf: plan FLAGS_check_nan_inf's
    checks (and no fusion: each op's outputs are checked). env: the environment (PADDLE_INF_NAN_SKIP_*).
    fuse: False plans no fusion (fused sums may round differently: without them the generated code gives
    the reference interpreter's numbers bit for bit). write_scope: False plans no scope writes."""
    block = program.block(block_idx)
    fetch_names, feed_lod = tuple(fetch_names), frozenset(feed_lod)
    regions = tuple(find_regions(block, fetch_names))
    fused = fusion.plan(block, fetch_names) if fuse and not check_nan_inf else {}
    in_regions = frozenset(i for r in regions for i in r.op_idx)
    pruned = frozenset(unread_recomputed(block, in_regions, fetch_names))
    later = later_backward_leaves(program, block)
    flow = Flow(block, _holds(scope), feed_names, feed_lod)
    walk = _Walk(block, flow, regions, later is not None, getattr(program, "_autograd_no_grad", set()),
                 nan_check.NanPolicy(block, regions, env) if check_nan_inf else None, mid_leaves(block, regions))
    steps = walk.run(schedule(block, regions, in_regions | pruned, fused))
    fetch_lod = []
    for f in fetch_names:
        flow.need(f, None)
        fetch_lod.append(f in flow.has_lod)
    writes = scope_writes(block, regions, flow.defined) if write_scope else ()
    keep = [Ref(f) for f in fetch_names] + [Ref(f, True) for f, l in zip(fetch_names, fetch_lod) if l] + \
        [Ref(w) for w in writes] + [Ref(w, True) for w in writes]
    steps = _with_frees(steps, keep)
    entry = set(feed_names) | set(flow.reads)
    return BlockPlan(
        program=program, block=block, feeds=tuple(feed_names), feed_lod=feed_lod,
        grad_mode=None if sub_block else (bool(regions) or later is not None),
        scope_reads=tuple(flow.reads), lod_reads=frozenset(n for n in flow.reads if n in flow.has_lod),
        grad_leaves=tuple(sorted(n for n in grad_leaves(block, regions, later) if n in entry)),
        steps=tuple(steps), writes=writes, lod_writes=frozenset(w for w in writes if w in flow.has_lod),
        fetches=fetch_names, fetch_lod=tuple(fetch_lod),
        fetch_persistable=tuple(_persistable(block, f) or f in flow.reads for f in fetch_names),
        regions=regions, fused=dict(fused), pruned=pruned,
        capture=capture_verdict(block, steps, feed_lod, flow.has_lod, check_nan_inf),
        shared_params=shared_params,
        unit_fills=frozenset() if check_nan_inf else unit_seed_fills(block, regions, fetch_names),
        entry_aliases=frozenset(n for n in entry_aliases(block, regions) if n in entry))


def unit_seed_fills(block, regions, fetch_names=()):
    """The fill_constant ops of append_backward's loss seeds (Region.unit_seeds) whose value nothing but the
    regions reads: no ordinary op, no fetch, not persistable. The regions take such a seed as None (ones), so
    the generated code need not make it (emit skips them unless a substitute autograd takes the tensors)."""
    seeds = set(n for r in regions for n in r.unit_seeds)
    if not seeds or any("sub_block" in op.attrs for op in block.ops):
        return frozenset()
    read = set(fetch_names)
    for op in block.ops:
        if not is_autograd_op(op):
            read.update(op.input_arg_names)
    out = []
    for i, op in enumerate(block.ops):
        names = op.output_arg_names
        if op.type != "fill_constant" or len(names) != 1 or names[0] not in seeds or names[0] in read:
            continue
        v = block._find_var_recursive(names[0])
        if v is not None and not v.persistable:
            out.append(i)
    return frozenset(out)


def _holds(scope):
    def holds(name):
        holder = scope.find_var(name) if scope is not None else None
        return holder is not None and holder.value is not None
    return holds


def _persistable(block, name):
    v = block._find_var_recursive(name)
    return bool(v is not None and v.persistable)


def schedule(block, regions, skipped, fused):
    """The run order: each region (at its first grad op) and each op that runs, as (index, Operator, OpDef);
    skipped: op indices that do not run by themselves (a region's grad ops, pruned ops); fused: fusion.plan's
    {index: replacement or None}. feed/fetch ops of a loaded __model__ do not run (the executor feeds and
    fetches by name)."""
    region_at = {r.start: r for r in regions}
    out = []
    for i, op in enumerate(block.ops):
        if i in region_at:
            out.append(region_at[i])
        if i in skipped or op.type in ("feed", "fetch"):
            continue
        if i in fused:
            op = fused[i]
            if op is None:
                continue
        out.append((i, op, kernel_of(block, i, op)))
    return out


class Flow:
    """What the walk has seen so far: names defined (fed, read from the scope, computed), names holding a LoD,
    and the scope reads in order. holds(name): whether the scope has a value for it."""

    def __init__(self, block, holds, feeds, feed_lod):
        self.block = block
        self.holds = holds
        self.defined = set(feeds)
        self.has_lod = set(n for n in feeds if n in feed_lod)
        self.reads = []

    def need(self, name, op):
        """A value the step reads: computed or fed before, else read from the scope (which must hold it)."""
        if name in self.defined:
            return Ref(name)
        v = self.block._find_var_recursive(name)
        if not self.holds(name):
            raise missing_value(name, v, op)
        self.reads.append(name)
        self.defined.add(name)
        if v is not None and v.lod_level > 0:
            self.has_lod.add(name)
        return Ref(name)

    def current(self, name, op):
        """An "@Out" slot: the value an output holds before the op runs (None if it has none yet)."""
        if name in self.defined or self.holds(name):
            return self.need(name, op)
        return None

    def lod(self, name):
        return Ref(name, True) if name in self.has_lod else None


def _slot(spec):
    return spec.rstrip("*"), spec.endswith("*")


def op_args(op, kernel, flow):
    """The kernel's tensor arguments, in its declared input order."""
    args = []
    for s in kernel.inputs:
        slot, many = _slot(s)
        if slot.startswith("@"):
            cur = tuple(flow.current(a, op) for a in op.outputs.get(slot[1:], []))
            args.append(cur if many else (cur[0] if cur else None))
            continue
        names = op.inputs.get(slot, [])
        if many:
            args.append(tuple(flow.need(a, op) for a in names))
        else:
            args.append(flow.need(names[0], op) if names else None)
    return args


def lod_args(op, kernel, flow):
    """The LoD arguments after the tensors ("@Out": the LoD an output holds before the op runs)."""
    args = []
    for s in kernel.lod_in:
        slot, many = _slot(s)
        names = op.outputs.get(slot[1:], []) if slot.startswith("@") else op.inputs.get(slot, [])
        if many:
            args.append(tuple(flow.lod(a) for a in names))
        else:
            args.append(flow.lod(names[0]) if names else None)
    return args


def op_outs(op, kernel):
    """What the kernel returns: its output slots, then the LoDs it computes."""
    outs = []
    for specs, lod in ((kernel.outputs, False), (kernel.lod_out, True)):
        for s in specs:
            slot, many = _slot(s)
            names = op.outputs.get(slot, [])
            if many:
                outs.append(tuple(Ref(a, lod) for a in names) if names else None)
            else:
                outs.append(Ref(names[0], lod) if names else None)
    return outs


def lod_after(op, kernel, block, first_lod):
    """(shares, gained): outputs with lod_level > 0 that the kernel gives no LoD take the first LoD input's
    (Paddle's ShareLoD) as ((output, input), ...); gained: every output holding a LoD after the op."""
    computed = set(_slot(s)[0] for s in kernel.lod_out)
    shares, gained = [], []
    for slot, names in op.outputs.items():
        for a in names:
            v = block._find_var_recursive(a)
            if v is None or v.lod_level <= 0:
                continue
            if slot in computed:
                gained.append(a)
            elif first_lod is not None and a != first_lod:
                shares.append((a, first_lod))
                gained.append(a)
    return tuple(shares), gained


def detach_outputs(op, kernel, block, no_grad_vars):
    """Outputs cut from autograd after the op: floating, not persistable, stop_gradient (or a no-grad
    variable of the backward), of an op carrying gradient. Only slots the kernel returns exist as values
    (not e.g. transpose2's XShape); an output computed without grad (batch_norm's saved statistics) is
    kept as it is by the emitted `if requires_grad`."""
    if not is_differentiable(op.type):
        return ()
    returned = set(kernel.output_slots())
    out = []
    for slot, names in op.outputs.items():
        if slot not in returned:
            continue
        for a in names:
            v = block._find_var_recursive(a)
            if v is not None and (v.stop_gradient or a in no_grad_vars) and not v.persistable and \
                    v.dtype in FLOAT_TYPES:
                out.append(a)
    return tuple(out)


class _Walk:
    """Walks the schedule once, turning each entry into a step while Flow tracks definitions and LoD."""

    def __init__(self, block, flow, regions, later_backward, no_grad_vars, nan, leaves=frozenset()):
        self.block, self.flow, self.nan, self.leaves = block, flow, nan, leaves
        self.last_region = max((r.start for r in regions), default=-1)
        self.later_backward = later_backward
        self.no_grad_vars = no_grad_vars

    def run(self, sched):
        return [self.op_step(*item) if isinstance(item, tuple) else self.region_step(item) for item in sched]

    def region_step(self, r):
        op, flow = self.block.ops[r.start], self.flow
        for n in list(r.targets) + list(r.seeds) + list(r.wanted_forward()):
            flow.need(n, op)
        flow.defined.update(r.wanted)
        shares = region_lod_shares(self.block, r, flow.has_lod)
        flow.has_lod.difference_update(r.wanted)
        flow.has_lod.update(w for w, _ in shares)
        last = r.start == self.last_region
        return RegionStep(index=r.start, region=r, targets=tuple(r.targets), seeds=tuple(r.seeds),
                          inputs=tuple(r.wanted_forward()), outputs=tuple(r.wanted), lod_shares=shares,
                          retain_graph=not (last and self.block.forward_block_idx < 0), last=last,
                          nan_out=self.nan.after_region(r) if self.nan else ())

    def op_step(self, i, op, kernel):
        flow = self.flow
        args = op_args(op, kernel, flow)
        first_lod = next((a for names in op.inputs.values() for a in names if a in flow.has_lod), None)
        args += lod_args(op, kernel, flow)
        shares, gained = lod_after(op, kernel, self.block, first_lod)
        flow.defined.update(op.output_arg_names)
        flow.has_lod.update(gained)
        cut = i < self.last_region or self.later_backward
        checked, hooks = self.nan.after_op(i, op, kernel.output_slots()) if self.nan else ((), ())
        return OpStep(index=i, op=op, kernel=kernel, args=tuple(args), outs=tuple(op_outs(op, kernel)),
                      lod_shares=shares,
                      detach=detach_outputs(op, kernel, self.block, self.no_grad_vars) if cut else (),
                      nan_out=checked, nan_hooks=hooks,
                      leaves=tuple(n for n in op.output_arg_names if n in self.leaves))


def unread_recomputed(block, covered, fetch_names):
    """Indices of RecomputeOptimizer's forward copies whose values nothing but grad ops reads (grad ops read
    them for the record; autograd works on the forward graph) and no fetch asks for: running them would only
    repeat the forward. covered: the regions' op indices."""
    needed, unread = set(fetch_names), set()
    for i in reversed(range(len(block.ops))):
        op = block.ops[i]
        if i in covered:
            continue
        if is_recomputed_op(op) and not needed.intersection(op.output_arg_names):
            unread.add(i)
            continue
        needed.update(op.input_arg_names)
        for sub in op.attrs.values():       # a control-flow op's body reads names too
            if hasattr(sub, "ops") and hasattr(sub, "idx"):
                needed.update(n for o in sub.ops for n in o.input_arg_names)
    return unread


def later_backward_leaves(program, block):
    """The forward names whose gradients the backward blocks of `block` and of the sub-blocks its ops own
    compute (see fluid/backward/backward.py, minimize inside a sub-block); None when there are no such blocks. Such
    a backward goes through this block's forward ops: they run with grad on, the parameters as leaves."""
    fwd, todo = set(), [block]
    while todo:                     # the block and every forward sub-block under it (nested conds)
        b = todo.pop()
        fwd.add(b.idx)
        for op in b.ops:
            sub = op.attrs.get("sub_block")
            if sub is not None and getattr(sub, "forward_block_idx", -1) < 0 and sub.idx not in fwd:
                todo.append(sub)
    leaves = None
    for b in program.blocks:
        # not Paddle's grad block of a control-flow op (a program it wrote): its grad op is in a region
        if b.forward_block_idx in fwd and updates_params(b):
            leaves = leaves if leaves is not None else set()
            for r in find_regions(b):
                leaves.update(r.wanted_forward())
    return leaves


def mid_leaves(block, regions):
    """Forward names a region differentiates that an ordinary op before it computes: made autograd leaves
    right after that op when the value carries no graph (a fill_constant's output with stop_gradient set
    False, 2 * a data variable: Paddle gives them a gradient, fluid/backward's _grad_flow)."""
    out = set()
    for r in regions:
        before = set()
        for i, op in enumerate(block.ops[:r.start]):
            if not is_autograd_op(op):
                before.update(n for n in op.output_arg_names if n not in aliased_outputs(op))
        out.update(n for n in r.wanted_forward() if n in before and _is_float(block, n) and
                   not _read_first(block, n, r.start))
    return frozenset(out)


def _is_float(block, name):
    v = block._find_var_recursive(name)
    return v is not None and v.dtype in FLOAT_TYPES


def grad_leaves(block, regions, later_backward):
    """Names made to require grad at entry: the forward names a region differentiates that no op before
    the region produces, or that an op before it reads before any writes them (an in-place loop variable a
    `while` rewrites: its gradient is the entry value's, entry_aliases), and those a later backward block
    differentiates that no op here produces."""
    leaves = set()
    for r in regions:
        leaves.update(fv for fv in r.wanted_forward() if _read_first(block, fv, r.start))
    if later_backward is not None:
        produced = set(n for op in block.ops for n in op.output_arg_names)
        leaves.update(n for n in later_backward if n not in produced)
    return leaves


def _read_first(block, name, end):
    """Whether ops[:end] read `name` before any of them writes it, or none writes it."""
    for op in block.ops[:end]:
        if name in op.input_arg_names:
            return True
        if name in op.output_arg_names and name not in aliased_outputs(op):
            return False
    return True


def entry_aliases(block, regions):
    """Entry leaves (grad_leaves) that an op before the region rewrites: the region differentiates w.r.t.
    the value read at entry, kept under its own local (Paddle's while_grad gives X@GRAD of the loop's input)."""
    out = set()
    for r in regions:
        for fv in r.wanted_forward():
            if not _read_first(block, fv, r.start):
                continue
            if any(fv in op.output_arg_names and fv not in aliased_outputs(op) for op in block.ops[:r.start]):
                out.add(fv)
    return frozenset(out)


def scope_writes(block, regions, defined):
    """The persistable names the step writes back to the scope: outputs of its ops, then the regions'
    persistable gradients, each once."""
    writes = []
    for op in block.ops:
        for a in op.output_arg_names:
            if a in defined and a not in writes and _persistable(block, a):
                writes.append(a)
    for r in regions:
        for w in r.wanted:
            if w not in writes and _persistable(block, w):
                writes.append(w)
    return tuple(writes)


def step_refs(step):
    """(assigned, mentioned): the values a step assigns and every value it names."""
    if isinstance(step, RegionStep):
        outs = set(Ref(n) for n in step.outputs) | set(Ref(dst, True) for dst, _ in step.lod_shares)
        ins = set(Ref(n) for n in step.targets + step.seeds + step.inputs) | \
            set(Ref(src, True) for _, src in step.lod_shares)
        return outs, outs | ins | set(Ref(n) for _, n in step.nan_out)
    if isinstance(step, FreeStep):
        return set(), set(step.refs)
    assigned = set(_flat(step.outs)) | set(Ref(dst, True) for dst, _ in step.lod_shares)
    mentioned = assigned | set(_flat(step.args)) | set(Ref(src, True) for _, src in step.lod_shares)
    mentioned |= set(Ref(n) for n in step.detach + step.leaves) | set(Ref(n) for _, n in step.nan_out)
    mentioned |= set(Ref(n) for _, _, n in step.nan_hooks)
    return assigned, mentioned


def _flat(refs):
    for r in refs:
        if isinstance(r, Ref):
            yield r
        elif r:
            yield from (x for x in r if x is not None)


def frees_before_backward(steps, at, keep):
    """The values assigned before step `at` (the last backward) that neither it, nor anything after it, nor
    `keep` (fetches, scope writes) reads: activations, mostly. Autograd's graph still holds what the
    backward needs and lets go of each saved tensor once its node has run, as in a torch training step; a
    local holding it as well would keep every activation alive until the step returns: a higher peak, which
    the allocator answered with fresh pages (thousands of page faults per ResNet step on the CPU)."""
    assigned, read_after = set(), set(keep)
    for s in steps[:at]:
        assigned |= step_refs(s)[0]
    for s in steps[at:]:
        read_after |= step_refs(s)[1]
    return tuple(sorted(assigned - read_after))


def _with_frees(steps, keep):
    at = next((k for k, s in enumerate(steps) if isinstance(s, RegionStep) and s.last), None)
    if at is None:
        return steps
    dead = frees_before_backward(steps, at, keep)
    return steps[:at] + [FreeStep(dead)] + steps[at:] if dead else steps
