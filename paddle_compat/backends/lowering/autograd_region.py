"""Backward regions: runs of grad ops recorded by append_backward, computed by one torch.autograd.grad.

A region starts at its first grad op. Its seeds are the @GRAD variables its grad ops read but do not
write (loss@GRAD, filled and perhaps scaled by ordinary ops just before); its targets are the seeds'
forward variables. It yields the @GRAD variables that anything outside the region reads (optimizer ops,
send, allreduce, fetch), each as d(targets)/d(forward var).
"""

from ...ir import GRAD_SUFFIX, is_autograd_op, is_recomputed_op
from ...ir.lazy import torch
from .op_checks import check_grad_ops


class Region:
    def __init__(self, start):
        self.start = start          # index of the first grad op
        self.op_idx = []            # indices of the grad ops it covers
        self.seeds = []             # @GRAD names fed in
        self.unit_seeds = set()     # seeds that are append_backward's fill_constant 1.0 of a one-element loss
        self.wanted = []            # @GRAD names it must produce

    @property
    def targets(self):
        return [s[: -len(GRAD_SUFFIX)] for s in self.seeds]

    def wanted_forward(self):
        return [g[: -len(GRAD_SUFFIX)] for g in self.wanted]


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
    for r in regions:
        _seeds_and_wanted(block, r, fetch)
        _check_parts(block.ops, r, fetch, region_of, produced_by)
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


def _seeds_and_wanted(block, r, fetch):
    """A region's seeds (the @GRAD names it reads and does not write) and the @GRAD names it must produce
    (those read outside it, fetched, or persistable)."""
    ops = block.ops
    produced, read = [], set()
    for i in r.op_idx:
        read.update(ops[i].input_arg_names)
        produced.extend(ops[i].output_arg_names)
    produced_set = set(produced)
    r.seeds = sorted(n for n in read if n.endswith(GRAD_SUFFIX) and n not in produced_set)
    r.unit_seeds = _unit_seeds(block, r.seeds)
    in_region = set(r.op_idx)
    outside_reads = set(fetch)
    for j, op in enumerate(ops):
        if j not in in_region:
            outside_reads.update(op.input_arg_names)
    seen = set()
    for n in produced:
        if n in seen or "@RENAME@" in n or not n.endswith(GRAD_SUFFIX):
            continue
        seen.add(n)
        v = block._find_var_recursive(n)
        if n in outside_reads or (v is not None and v.persistable):
            r.wanted.append(n)


def _check_parts(ops, r, fetch, region_of, produced_by):
    """A gradient part (x@GRAD@RENAME@k, summed into x@GRAD) exists only inside its region's autograd call:
    nothing outside may read it."""
    in_region = set(r.op_idx)
    produced = set(n for i in r.op_idx for n in ops[i].output_arg_names)
    for n in sorted(produced):
        if "@RENAME@" not in n:
            continue
        for j, op in enumerate(ops):
            if j in in_region or n not in op.input_arg_names:
                continue
            # a second append_backward reuses the part names: its own region writes them before reading
            if j in region_of and n in produced_by[region_of[j]]:
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


def autograd(targets, inputs, seeds, retain_graph=False):
    """d(targets)/d(inputs) with seeds as output gradients; zeros where an input does not reach a target.
    retain_graph: a later backward region (a second append_backward) goes through the same forward."""
    outs = [t for t in targets if t.requires_grad]
    if not outs:
        return [torch.zeros_like(x) for x in inputs]
    gos = [s for t, s in zip(targets, seeds) if t.requires_grad]   # None: a unit seed (_unit_seeds)
    run = _engine_run()
    if run is not None and all(s is None and t.numel() == 1 for t, s in zip(outs, gos)):
        # the usual step (one loss, its unit seed): what torch.autograd.grad ends in, without the argument
        # handling around it (about 4 us a step); the seeds are the ones it would make
        grads = run(tuple(outs), tuple(torch.ones_like(t, memory_format=torch.preserve_format) for t in outs),
                    retain_graph, False, tuple(inputs), True, accumulate_grad=False)
    else:
        grads = torch.autograd.grad(outs, inputs, gos, allow_unused=True, retain_graph=retain_graph)
    if any(g is None for g in grads):
        grads = [torch.zeros_like(x) if g is None else g for x, g in zip(inputs, grads)]
    return grads


_ENGINE_RUN = []


def _engine_run():
    """torch.autograd.grad's call into the engine (torch.autograd.graph._engine_run_backward), None on a torch
    without it (then torch.autograd.grad itself runs)."""
    if not _ENGINE_RUN:
        graph = getattr(torch.autograd, "graph", None)
        _ENGINE_RUN.append(getattr(graph, "_engine_run_backward", None))
    return _ENGINE_RUN[0]
