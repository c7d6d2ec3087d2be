"""Backward regions: runs of grad ops recorded by append_backward, computed by one torch.autograd.grad.

A region starts at its first grad op. Its seeds are the @GRAD variables its grad ops read but do not
write (loss@GRAD, filled and perhaps scaled by ordinary ops just before); its targets are the seeds'
forward variables. It yields the @GRAD variables that anything outside the region reads (optimizer ops,
send, allreduce, fetch), each as d(targets)/d(forward var).
"""

from ...ir import GRAD_SUFFIX, forward_name, is_autograd_op, is_recomputed_op
from ...ir.lazy import torch
from .op_checks import check_grad_ops


class Region:
    def __init__(self, start):
        self.start = start          # index of the first grad op
        self.op_idx = []            # indices of the grad ops it covers
        self.seeds = []             # @GRAD names fed in
        self.unit_seeds = set()     # seeds that are append_backward's fill_constant 1.0 of a one-element loss
        self.wanted = []            # @GRAD names it must produce
        self.create_graph = False   # a later region differentiates through what it produces (a double grad)

    @property
    def targets(self):
        return [forward_name(s) for s in self.seeds]

    def wanted_forward(self):
        return [forward_name(g) for g in self.wanted]


def find_regions(block, fetch_names=()):
    regions = _group(block.ops)
    if not regions:
        return []
    check_grad_ops(block, regions)
    fetch = set(fetch_names)
    produced_by = []
    region_of = {}
    for k, r in enumerate(regions):
        names = set()
        for i in r.op_idx:
            region_of[i] = k
            names.update(block.ops[i].output_arg_names)
        produced_by.append(names)
    for k, r in enumerate(regions):
        _seeds(block, r, k, region_of)
    for k, r in enumerate(regions):
        _wanted(block, r, k, fetch, region_of, produced_by, regions)
        _check_parts(block.ops, r, fetch, region_of, regions)
    _mark_create_graph(block, regions)
    return regions


def _group(ops):
    """The runs of grad ops, each a Region (seeds and wanted not yet filled in)."""
    covered = [is_autograd_op(op) for op in ops]
    regions = []
    cur = None
    for i, op in enumerate(ops):
        if covered[i]:
            if cur is None:
                cur = Region(i)
                regions.append(cur)
            cur.op_idx.append(i)
        elif cur is not None and not is_recomputed_op(op):
            # An ordinary op that writes what a later grad op reads closes the region (it seeds the next).
            # Not a forward op RecomputeOptimizer copied into the backward section: the grad ops after it
            # read its outputs for the record only (autograd works on the forward graph), so the region
            # stays one autograd call, as without recomputation.
            later_reads = set()
            for j in range(i + 1, len(ops)):
                if covered[j]:
                    later_reads.update(ops[j].input_arg_names)
            if later_reads.intersection(op.output_arg_names):
                cur = None
    return regions


def _seeds(block, r, k, region_of):
    """A region's seeds: the @GRAD names its grad ops read and do not write, unless an earlier region wrote
    them last: those are forward values of this backward (fluid.gradients of a gradient), read for the
    record as any forward value is."""
    ops = block.ops
    produced, read = set(), set()
    for i in r.op_idx:
        read.update(_gradient_inputs(ops[i]))
        produced.update(ops[i].output_arg_names)
    last_writer = {}
    for i in range(r.start):
        for n in ops[i].output_arg_names:
            last_writer[n] = region_of.get(i)
    r.seeds = sorted(n for n in read if _is_grad_name(n) and n not in produced and
                     last_writer.get(n) in (None, k))
    r.unit_seeds = _unit_seeds(block, r.seeds)


def _wanted(block, r, k, fetch, region_of, produced_by, regions):
    """The @GRAD names region k must produce: fetched, persistable, or live after it, i.e. read by a later
    op before anything else writes them. A later region reads a name only as its seed (its grad ops read
    the rest for the record: autograd computes what they write, and a gradient of a gradient goes through
    the graph of what an earlier region made), and it writes whatever it produces, so a second
    append_backward over the same loss does not make the first region's values live (nor does the first
    region's reads make the second's: they come before it). Wanting a gradient means keeping its forward
    value, which fusion may not have made (fc's product): only what is read may be wanted."""
    ops = block.ops
    produced = []
    for i in r.op_idx:
        produced.extend(n for n in ops[i].output_arg_names if n not in produced)
    live, dead = set(fetch), set()
    last = r.op_idx[-1]
    j = last + 1
    while j < len(ops):
        other = region_of.get(j)
        if other is not None and other != k:      # a later region, as one step: reads its seeds, writes all
            reg_ops = [i for i in range(j, len(ops)) if region_of.get(i) == other]
            live.update(n for n in regions[other].seeds if n not in dead)
            dead.update(produced_by[other])
            j = max(reg_ops) + 1
            continue
        if other is None:
            op = ops[j]
            live.update(n for n in op.input_arg_names if n not in dead)
            for sub in op.attrs.values():   # a control-flow op's body reads names too
                if hasattr(sub, "ops") and hasattr(sub, "idx"):
                    live.update(n for o in sub.ops for n in o.input_arg_names if n not in dead)
            dead.update(n for n in op.output_arg_names if n not in live)
        j += 1
    # ordinary ops before the region (a block run again, a loop body, sees this run's values on its next
    # run) and those between its grad ops (recomputed forward ops, which read them for the record) count
    # as readers too, as do earlier regions' seeds
    for i in range(last):
        other = region_of.get(i)
        if other is None:
            live.update(ops[i].input_arg_names)
        elif other != k:
            live.update(regions[other].seeds)
    for n in produced:
        if "@RENAME@" in n or not n.endswith(GRAD_SUFFIX):
            continue
        v = block._find_var_recursive(n)
        if n in live or (v is not None and v.persistable):
            r.wanted.append(n)


def _gradient_inputs(op):
    """The names a grad op reads as incoming gradients. A grad op of order k (`<type>_grad` k times) takes
    them in slots carrying k @GRAD suffixes (mul_grad's Out@GRAD; the grad of elementwise_mul_grad takes
    X@GRAD@GRAD, while its Out@GRAD slot holds a forward value of that backward), and Paddle's own double
    grad ops in their DD* slots; any other op (sum, cross_entropy_grad2) in every slot."""
    t, k = op.type, 0
    while t.endswith("_grad"):
        t, k = t[: -len("_grad")], k + 1
    if k == 0:
        return op.input_arg_names
    return [n for slot, names in op.inputs.items()
            if slot.endswith(GRAD_SUFFIX * k) or (k > 1 and slot.startswith("DD")) for n in names]


def _is_grad_name(n):
    return n.endswith(GRAD_SUFFIX) or (GRAD_SUFFIX + "_") in n and n.rsplit("_", 1)[-1].isdigit()


def _mark_create_graph(block, regions):
    """A region whose wanted gradients a later region's grad ops read (as forward values: the later
    backward goes through them) keeps its graph, so the later autograd call differentiates through it."""
    ops = block.ops
    for k, r in enumerate(regions):
        wanted = set(r.wanted)
        for later in regions[k + 1:]:
            if any(wanted.intersection(ops[i].input_arg_names) for i in later.op_idx):
                r.create_graph = True
                break


def _check_parts(ops, r, fetch, region_of, regions):
    """A gradient part (x@GRAD@RENAME@k, summed into x@GRAD) exists only inside its region's autograd call:
    nothing outside may read it, but for another region's grad ops that do not take it as a seed (they
    read it for the record: a gradient of a gradient goes through the graph that made it)."""
    in_region = set(r.op_idx)
    produced = set(n for i in r.op_idx for n in ops[i].output_arg_names)
    for n in sorted(produced):
        if "@RENAME@" not in n:
            continue
        for j, op in enumerate(ops):
            if j in in_region or n not in op.input_arg_names:
                continue
            if j in region_of and n not in regions[region_of[j]].seeds:
                continue
            raise NotImplementedError("gradient part %s is read outside its backward pass" % n)
        if n in fetch:
            raise NotImplementedError("gradient part %s is read outside its backward pass" % n)


def _unit_seeds(block, seeds):
    """The seeds written only by a fill_constant of 1.0 with one element (append_backward's loss seed). The
    lowering passes them to torch.autograd.grad as None, which torch reads as ones: the same gradient, and
    torch then does not import torch.fx's symbolic shapes (and sympy) on the first backward, about 0.3 s of
    CPU in every trainer's start-up. Decided from the program: no tensor is read on the host."""
    writers = {}
    for op in block.ops:
        for n in op.output_arg_names:
            writers.setdefault(n, []).append(op)
    unit = set()
    for n in seeds:
        ops = writers.get(n, [])
        if len(ops) != 1 or ops[0].type != "fill_constant":
            continue
        a = ops[0].attrs
        shape = list(a.get("shape") or [])
        if float(a.get("value", 0.0)) == 1.0 and not a.get("str_value") and shape and all(d == 1 for d in shape):
            unit.add(n)
    return unit


def autograd(targets, inputs, seeds, retain_graph=False, create_graph=False):
    """d(targets)/d(inputs) with seeds as output gradients; zeros where an input does not reach a target.
    retain_graph: a later backward region (a second append_backward) goes through the same forward.
    create_graph: a later region differentiates these gradients (Region.create_graph)."""
    outs = [t for t in targets if t.requires_grad]
    if not outs:
        return [torch.zeros_like(x) for x in inputs]
    gos = [s for t, s in zip(targets, seeds) if t.requires_grad]   # None: a unit seed (_unit_seeds)
    run = _engine_run()
    if not create_graph and run is not None and all(s is None and t.numel() == 1 for t, s in zip(outs, gos)):
        # the usual step (one loss, its unit seed): what torch.autograd.grad ends in, without the argument
        # handling around it (about 4 us a step); the seeds are the ones it would make
        grads = run(tuple(outs), tuple(torch.ones_like(t, memory_format=torch.preserve_format) for t in outs),
                    retain_graph, False, tuple(inputs), True, accumulate_grad=False)
    else:
        grads = torch.autograd.grad(outs, inputs, gos, allow_unused=True, retain_graph=retain_graph or create_graph,
                                    create_graph=create_graph)
    if any(g is None for g in grads):
        grads = [torch.zeros_like(x) if g is None else g for x, g in zip(inputs, grads)]
    for i, g in enumerate(grads):
        # a convolution over channels-last activations (FLAGS_conv_channels_last) may give its filter a
        # channels-last gradient: gradients leave in the standard layout, which allreduce and the
        # optimizers' flat views take
        # (only those: a broadcast's stride-0 gradient stays as it is, cheap to read)
        if g.dim() == 4 and g.layout is torch.strided and not g.is_contiguous() and \
                g.is_contiguous(memory_format=torch.channels_last):
            if type(grads) is tuple:
                grads = list(grads)
            grads[i] = g.contiguous()
    return grads


_ENGINE_RUN = []


def _engine_run():
    """torch.autograd.grad's call into the engine (torch.autograd.graph._engine_run_backward), None on a torch
    without it (then torch.autograd.grad itself runs)."""
    if not _ENGINE_RUN:
        graph = getattr(torch.autograd, "graph", None)
        _ENGINE_RUN.append(getattr(graph, "_engine_run_backward", None))
    return _ENGINE_RUN[0]
