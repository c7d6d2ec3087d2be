"""Lower one block to one generated Python function: straight-line calls of prebuilt kernels on locals.

The hot path does no per-op dispatch: every op becomes `v12 = k7(v3, v4)` in generated source, compiled
once per (program version, feeds, fetches, scope). Runs of grad ops become one torch.autograd.grad call.
A failing op is found again from the traceback's line number, and re-raised naming the op, its
inputs' shapes and where its layer was built.
"""

import itertools
import linecache
import re
import sys

from ...ir import EOFException, lod_as_tensors
from ...ir.dtypes import FLOAT_TYPES
from ...ops import aliased_outputs, is_differentiable
from . import fusion, registry
from ...ir import is_recomputed_op
from .autograd_region import autograd, find_regions

_ids = itertools.count()


class LoweringError(RuntimeError):
    """The program cannot be run as given (a missing feed, an uninitialised variable, an unknown op)."""


class OpRunError(RuntimeError):
    """An op failed while running; the message names the op, its inputs and where it was built."""


class LowerCtx:
    """What a kernel factory may look at: static variable info and where tensors live."""

    def __init__(self, program, block, scope, device, executor=None, shared_params=False, check_nan_inf=False):
        self.program = program
        self.block = block
        self.scope = scope
        self.device = device
        self.executor = executor
        self.shared_params = shared_params
        self.check_nan_inf = check_nan_inf

    def var(self, name):
        return self.block._find_var_recursive(name)

    def lower_sub_block(self, block_idx, in_names, out_names, feed_lod=()):
        """Compiles a control-flow op's body once; the kernel calls it per step (ops/ cannot import backends).
        The names in feed_lod are given to it as (tensor, LoD) pairs."""
        return lower_block(self.program, block_idx, self.scope, self.device, in_names, out_names,
                           executor=self.executor, feed_lod=tuple(feed_lod), sub_block=True,
                           shared_params=self.shared_params, check_nan_inf=self.check_nan_inf)


def _describe(op):
    where = (" (created at %s)" % op.callsite) if op.callsite else ""
    outs = ", ".join(op.output_arg_names[:3])
    return "op '%s'%s%s" % (op.type, (" -> " + outs) if outs else "", where)


class _Names:
    """Var name -> python local name."""

    def __init__(self):
        self.map = {}

    def __call__(self, name):
        local = self.map.get(name)
        if local is None:
            local = self.map[name] = "v%d" % len(self.map)
        return local

    def lod(self, name):
        return "l" + self(name)[1:]


class LoweredBlock:
    def __init__(self, fn, feed_names, fetch_names, line_ops, block, src, fetch_persistable, fetch_lod):
        self.fn = fn
        self.feed_names = feed_names
        self.fetch_names = fetch_names
        self.line_ops = line_ops
        self.block = block
        self.src = src
        self.fetch_persistable = fetch_persistable
        self.fetch_lod = fetch_lod

    def __call__(self, feeds):
        try:
            return self.fn(feeds)
        except (OpRunError, EOFException):   # EOF ends a non-iterable reader's pass: the user catches it
            raise
        except Exception as e:  # re-raise naming the op that failed
            raise self._op_error(e, sys.exc_info()[2]) from e

    def _op_error(self, exc, tb):
        frame_tb = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self.fn.__code__.co_filename:
                frame_tb = tb
            tb = tb.tb_next
        if frame_tb is None:
            return OpRunError("%s: %s" % (type(exc).__name__, exc))
        line = frame_tb.tb_lineno
        what = self.line_ops.get(line)
        if what is None:
            return OpRunError("%s: %s" % (type(exc).__name__, exc))
        op, names = what
        local_vals = frame_tb.tb_frame.f_locals
        parts = []
        for slot, args in op.inputs.items():
            shown = []
            for a in args:
                val = local_vals.get(names.map.get(a, "?"))
                shape = list(getattr(val, "shape", [])) if val is not None else "undefined"
                shown.append("%s%s" % (a, shape))
            parts.append("%s=%s" % (slot, ", ".join(shown)))
        return OpRunError("%s failed: %s: %s\n  inputs: %s" % (_describe(op), type(exc).__name__, exc,
                                                            "; ".join(parts)))


def _unread_recomputed(block, covered, fetch_names):
    """Indices of RecomputeOptimizer's forward copies whose values nothing but grad ops reads (grad ops read
    them for the record; autograd works on the forward graph) and no fetch asks for: running them would only
    repeat the forward."""
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


def lower_block(program, block_idx, scope, device, feed_names=(), fetch_names=(), executor=None,
                feed_lod=(), autograd_for=None, sub_block=False, shared_params=False, check_nan_inf=None):
    """autograd_for(block, region) -> callable like autograd_region.autograd lets a backend substitute the
    gradient call of a region (the data-parallel runner overlaps its allreduce with it).
    sub_block: the body of a control-flow op (while, conditional_block): it keeps the caller's grad mode,
    so autograd sees through it.
    shared_params: the function runs on several threads at once over the same scope (train_from_dataset's
    Hogwild). Scope values are then read through `.data`: the same storage (in-place optimizer updates reach
    every thread) under a version counter of this call's own, so one thread's update of a parameter does not
    make torch reject another thread's backward through it (it reads the parameter as it is then, as
    Paddle's lock-free Hogwild does). Everything else a step holds is local to the call.
    check_nan_inf: FLAGS_check_nan_inf (None: the environment's); when on, nan_check adds its checks after
    each op and region (and nothing when off)."""
    from . import nan_check    # (it imports this module)
    if check_nan_inf is None:
        check_nan_inf = nan_check.flag_on()
    block = program.block(block_idx)
    ctx = LowerCtx(program, block, scope, device, executor, shared_params, check_nan_inf)
    regions = find_regions(block, fetch_names)
    # {op index: fused replacement, or None: runs inside it}; none while checking each op's outputs
    fused = fusion.plan(block, fetch_names) if not check_nan_inf else {}
    region_at = {r.start: r for r in regions}
    covered = set(i for r in regions for i in r.op_idx)
    covered |= _unread_recomputed(block, covered, fetch_names)
    last_region = max((r.start for r in regions), default=-1)
    no_grad_vars = getattr(program, "_autograd_no_grad", set())
    names = _Names()
    g = {"__ag": autograd, "__ag_keep": lambda t, x, s: autograd(t, x, s, retain_graph=True)}
    checks = nan_check.Checks(block, regions, g) if check_nan_inf else None
    body = []          # (text, (op, names) or None)
    backward_at = None  # index in body of the last backward region's call
    defined = set()
    has_lod = set()
    scope_reads = []   # var names read from the scope at entry

    def local(n):
        return names(n)

    def need(n, op):
        if n in defined:
            return local(n)
        holder = scope.find_var(n) if scope is not None else None
        v = block._find_var_recursive(n)
        if holder is None or holder.value is None:
            if v is not None and v.is_data:
                raise LoweringError("data variable '%s' is used by %s but was not fed (feed it in "
                                    "exe.run(feed={'%s': ...}))" % (n, _describe(op) if op else "fetch", n))
            raise LoweringError("variable '%s' is used by %s but was neither fed nor initialised in the "
                                "scope (did you run the startup program?)" % (n, _describe(op) if op else "fetch_list"))
        g["h_" + local(n)] = holder
        scope_reads.append(n)
        defined.add(n)
        if v is not None and v.lod_level > 0:
            has_lod.add(n)
        return local(n)

    def current(n, op):
        # "@Out" slots: the value an output variable holds before the op runs (None if it has none yet);
        # control-flow and array ops update what they write
        if n in defined:
            return local(n)
        holder = scope.find_var(n) if scope is not None else None
        return need(n, op) if holder is not None and holder.value is not None else "None"

    for n in feed_names:
        defined.add(n)
        if n in feed_lod:
            has_lod.add(n)

    leaves_wanting_grad = set()
    for r in regions:
        for fv in r.wanted_forward():
            if fv not in _produced_before(block, r.start, fv):
                leaves_wanting_grad.add(fv)
    # a backward block of this block or of a sub-block its ops own (minimize inside a cond branch) takes
    # gradients through this block's forward ops: they run with grad on, the parameters as leaves
    later_backward = _later_backward_leaves(program, block)
    if later_backward is not None:
        produced = set(n for op in block.ops for n in op.output_arg_names)
        leaves_wanting_grad.update(n for n in later_backward if n not in produced)

    for i, op in enumerate(block.ops):
        if i in region_at:
            r = region_at[i]
            tg = ", ".join(need(t, op) for t in r.targets)
            sd = ", ".join(need(s, op) for s in r.seeds)
            xs = ", ".join(need(x, op) for x in r.wanted_forward())
            outs = ", ".join(local(w) for w in r.wanted)
            # a backward block's forward part may be differentiated again (another branch's backward block)
            ag = "__ag" if i == last_region and block.forward_block_idx < 0 else "__ag_keep"
            if autograd_for is not None and r.wanted:
                ag = "__ag%d" % i
                g[ag] = autograd_for(block, r)
            if i == last_region:
                backward_at = len(body)
            body.append(("%s, = %s((%s,), (%s,), (%s,))" % (outs, ag, tg, xs, sd) if r.wanted else "pass",
                         (op, names)))
            if checks is not None:
                body.extend((line, None) for line in checks.after_region(r, local))
            defined.update(r.wanted)
            if i == last_region:
                body.append(("__set_grad(False)", None))
        if i in covered:
            continue
        if op.type in ("feed", "fetch"):   # from a Paddle __model__: the executor feeds/fetches by name itself
            continue
        if i in fused:
            op = fused[i]
            if op is None:
                continue
        spec = registry.get(op.type)
        kname = "k%d" % i
        g[kname] = spec.factory(op, ctx)
        args = []
        for s in spec.inputs:
            slot, is_list = s.rstrip("*"), s.endswith("*")
            if slot.startswith("@"):
                cur = [current(a, op) for a in op.outputs.get(slot[1:], [])]
                args.append("[%s]" % ", ".join(cur) if is_list else (cur[0] if cur else "None"))
                continue
            arg_names = op.inputs.get(slot, [])
            if is_list:
                args.append("[%s]" % ", ".join(need(a, op) for a in arg_names))
            else:
                args.append(need(arg_names[0], op) if arg_names else "None")
        first_lod = None
        for slot, arg_names in op.inputs.items():
            for a in arg_names:
                if a in has_lod and first_lod is None:
                    first_lod = a
        for s in spec.lod_in:
            slot, is_list = s.rstrip("*"), s.endswith("*")
            # "@Out": the LoD an output variable holds before the op runs
            arg_names = op.outputs.get(slot[1:], []) if slot.startswith("@") else op.inputs.get(slot, [])
            if is_list:
                args.append("[%s]" % ", ".join(names.lod(a) if a in has_lod else "None" for a in arg_names))
            else:
                args.append(names.lod(arg_names[0]) if arg_names and arg_names[0] in has_lod else "None")
        outs = []
        for s in spec.outputs:
            slot, is_list = s.rstrip("*"), s.endswith("*")
            arg_names = op.outputs.get(slot, [])
            if is_list:
                outs.append("[%s]" % ", ".join(local(a) for a in arg_names) if arg_names else "_")
            else:
                outs.append(local(arg_names[0]) if arg_names else "_")
        lod_outs = []
        for s in spec.lod_out:
            slot, is_list = s.rstrip("*"), s.endswith("*")
            arg_names = op.outputs.get(slot, [])
            if is_list:
                lod_outs.append("[%s]" % ", ".join(names.lod(a) for a in arg_names) if arg_names else "_")
            else:
                lod_outs.append(names.lod(arg_names[0]) if arg_names else "_")
        lod_out_slots = set(s.rstrip("*") for s in spec.lod_out)
        call = "%s(%s)" % (kname, ", ".join(args))
        targets = outs + lod_outs
        if not targets:
            body.append((call, (op, names)))
        elif len(targets) == 1:
            body.append(("%s = %s" % (targets[0], call), (op, names)))
        else:
            body.append(("(%s,) = %s" % (", ".join(targets), call), (op, names)))
        if checks is not None:
            slots = [s.rstrip("*") for s in spec.outputs]
            body.extend((line, None) for line in checks.after_op(i, op, slots, local))
        for slot, arg_names in op.outputs.items():
            for a in arg_names:
                defined.add(a)
                v = block._find_var_recursive(a)
                if v is None:
                    continue
                if v.lod_level > 0 and slot not in lod_out_slots and first_lod is not None and a != first_lod:
                    body.append(("%s = %s" % (names.lod(a), names.lod(first_lod)), None))
                    has_lod.add(a)
                elif v.lod_level > 0 and slot in lod_out_slots:
                    has_lod.add(a)
                # Only slots the kernel returns exist as locals (not e.g. transpose2's XShape).
                if (i < last_region or later_backward is not None) and \
                        (v.stop_gradient or a in no_grad_vars) and not v.persistable and \
                        v.dtype in FLOAT_TYPES and is_differentiable(op.type) and slot in spec.output_slots():
                    # (an output computed without grad, e.g. batch_norm's saved statistics, is kept as is)
                    body.append(("if %s.requires_grad: %s = %s.detach()" % (local(a), local(a), local(a)), None))

    fetch_locals = []
    fetch_persistable = []
    fetch_lod = []
    for f in fetch_names:
        fetch_locals.append(need(f, None))
        v = block._find_var_recursive(f)
        fetch_persistable.append(bool(v is not None and v.persistable) or f in scope_reads)
        fetch_lod.append(names.lod(f) if f in has_lod else "None")

    # persistable variables the block writes go back to the scope
    writes = []
    for op_i, op in enumerate(block.ops):
        for a in op.output_arg_names:
            v = block._find_var_recursive(a)
            if v is not None and v.persistable and a in defined and a not in writes:
                writes.append(a)
    for r in regions:
        for w in r.wanted:
            v = block._find_var_recursive(w)
            if v is not None and v.persistable and w not in writes:
                writes.append(w)

    if backward_at is not None:
        keep = fetch_locals + fetch_lod + [local(w) for w in writes] + [names.lod(w) for w in writes]
        body = _free_before_backward(body, backward_at, keep)

    # ---- assemble source ----
    fname = "<paddle_compat block %d of program %d #%d>" % (block_idx, program._uid, next(_ids))
    lines = ["def __run(__feeds):", "    __prev = __is_grad()", "    try:",
             "        __set_grad(%s)" % ("__prev" if sub_block else bool(regions) or later_backward is not None)]
    line_ops = {}
    k = 0
    for n in feed_names:
        if n in feed_lod:   # (a sub-block may write a LoD into a variable it was given without one)
            lines.append("        %s, %s = __feeds[%d]" % (local(n), names.lod(n), k))
        else:
            lines.append("        %s = __feeds[%d]" % (local(n), k))
        k += 1
    on_cpu = str(device) == "cpu"
    for n in scope_reads:
        # off the CPU, a scope value that lives elsewhere (a state set from numpy, a CPU-loaded checkpoint) is
        # moved to the run's device once and kept there, as Paddle's data transform moved it per op
        read = "h_%s.value" % local(n) if on_cpu else "__on_dev(h_%s)" % local(n)
        lines.append(("        %s = __shared(%s)" if shared_params else "        %s = %s") % (local(n), read))
        if n in has_lod:   # the scope may hold offsets as lists (set by the user): tensors here
            lines.append("        %s = __lod(h_%s.lod, __dev)" % (names.lod(n), local(n)))
    for n in sorted(leaves_wanting_grad):
        if n in defined:
            lines.append("        if not %s.requires_grad: %s.requires_grad_(True)" % (local(n), local(n)))
    for text, what in body:
        lines.append("        " + text)
        if what is not None:
            line_ops[len(lines)] = what
    for w in writes:
        g.setdefault("h_" + local(w), scope.var(w))
        lines.append("        h_%s.value = %s" % (local(w), local(w)))
        if w in has_lod:
            lines.append("        h_%s.lod = %s" % (local(w), names.lod(w)))
    lines.append("        return (%s)" % "".join("(%s, %s), " % (f, l) for f, l in zip(fetch_locals, fetch_lod)))
    lines.append("    finally:")
    lines.append("        __set_grad(__prev)")
    src = "\n".join(lines) + "\n"

    import torch
    g["__lod"] = lod_as_tensors
    g["__shared"] = _shared(torch.Tensor)
    g["__on_dev"] = _on_device(torch.Tensor, torch.device(device))
    g["__dev"] = device
    g["__is_grad"] = torch.is_grad_enabled
    g["__set_grad"] = torch._C._set_grad_enabled
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    exec(compile(src, fname, "exec"), g)
    return LoweredBlock(g["__run"], list(feed_names), list(fetch_names), line_ops, block, src,
                        fetch_persistable, fetch_lod)


_LOCAL = re.compile(r"\b[vl]\d+\b")


def _free_before_backward(body, at, keep):
    """Deletes, just before the last backward region, the locals that ops wrote before it and that nothing
    reads after it (activations, mostly). Autograd's graph still holds what the backward needs and lets go
    of each saved tensor once its node has run, as in a torch training step; a local holding it as well
    would keep every activation alive until the step returns: a higher peak, which the allocator answered
    with fresh pages (thousands of page faults per ResNet step on the CPU)."""
    assigned = set()
    for text, _ in body[:at]:
        if " = " in text and not text.startswith("if "):
            assigned.update(_LOCAL.findall(text.split(" = ", 1)[0]))
    read_after = set(keep)
    for text, _ in body[at:]:
        read_after.update(_LOCAL.findall(text))
    dead = sorted(assigned - read_after, key=lambda n: (n[0], int(n[1:])))
    if not dead:
        return body
    return body[:at] + [("del " + ", ".join(dead), None)] + body[at:]


def _on_device(tensor_type, device):
    def read(holder):
        v = holder.value
        if isinstance(v, tensor_type) and v.device != device:
            moved = v.detach().to(device)
            v = holder.value = moved.requires_grad_(True) if v.requires_grad else moved
        return v
    return read


def _shared(tensor_type):
    return lambda value: value.data if isinstance(value, tensor_type) else value


def _later_backward_leaves(program, block):
    """The forward names whose gradients the backward blocks of `block` and of the sub-blocks its ops own
    compute (see fluid/backward.py, minimize inside a sub-block); None when there are no such blocks."""
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
        if b.forward_block_idx in fwd:
            leaves = leaves if leaves is not None else set()
            for r in find_regions(b):
                leaves.update(r.wanted_forward())
    return leaves


def _produced_before(block, end, name):
    out = set()
    for op in block.ops[:end]:
        if name in op.output_arg_names and name not in aliased_outputs(op):
            out.add(name)
    return out
