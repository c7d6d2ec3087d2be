"""Turn a BlockPlan into one generated Python function: straight-line calls of prebuilt kernels on locals.

The hot path does no per-op dispatch: every op becomes `v12 = k7(v3, v4)  # op comment`, compiled once per
(program version, feeds, fetches, scope). A failing op is found again from the traceback's line number, and
re-raised naming the op, its inputs' shapes and where its layer was built. The source is kept on the
result (`.code`) and shown with PADDLE_COMPAT_DEBUG_LOWERING (debug.py).
"""

import itertools
import linecache
import sys

from ...ir import EOFException, lod_as_tensors
from ...ir.lazy import torch
from ...ops import info
from . import debug
from .autograd_region import autograd
from .ctx import OpRunError, op_failure
from .nan_check import NanRuntime
from .plan_types import FreeStep, OpStep, Ref, RegionStep

_ids = itertools.count()


class _Names:
    """Var name -> python local name (v<k> for the value, l<k> for its LoD)."""

    def __init__(self):
        self.map = {}

    def __call__(self, name):
        local = self.map.get(name)
        if local is None:
            local = self.map[name] = "v%d" % len(self.map)
        return local

    def lod(self, name):
        return "l" + self(name)[1:]

    def ref(self, r):
        return self.lod(r.name) if r.lod else self(r.name)


class LoweredBlock:
    """The callable a block lowers to: lowered(feeds) -> ((value, LoD), ...) per fetch. `.code` is its
    generated source (as torch.fx's GraphModule.code), `.plan` the BlockPlan it was emitted from."""

    def __init__(self, fn, plan, line_ops, src):
        self.fn = fn
        self.plan = plan
        self.feed_names = list(plan.feeds)
        self.fetch_names = list(plan.fetches)
        self.line_ops = line_ops
        self.block = plan.block
        self.code = self.src = src
        self.fetch_persistable = list(plan.fetch_persistable)
        self.fetch_lod = list(plan.fetch_lod)

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
        what = self.line_ops.get(frame_tb.tb_lineno) if frame_tb is not None else None
        if what is None:
            return OpRunError("%s: %s" % (type(exc).__name__, exc))
        op, names = what
        local_vals = frame_tb.tb_frame.f_locals
        return op_failure(op, exc, lambda a: local_vals.get(names.map.get(a, "?")))


def emit(plan, ctx, autograd_for=None, inplace_writes=False):
    """Build the kernels (factory(op, ctx), in op order), write the function's source and compile it.
    autograd_for(block, region) -> callable like autograd_region.autograd replaces a region's gradient
    call (the data-parallel runner overlaps its allreduce with it). inplace_writes: scope values are
    updated in place (copy_) rather than rebound, so that their storage never moves (CUDA-graph capture)."""
    g = {"__ag": autograd, "__ag_keep": lambda t, x, s: autograd(t, x, s, retain_graph=True),
         "__ag_graph": lambda t, x, s: autograd(t, x, s, create_graph=True),
         "__lod": lod_as_tensors, "__dev": ctx.device, "__is_grad": torch.is_grad_enabled,
         "__set_grad": torch._C._set_grad_enabled, "__shared": _shared(torch.Tensor),
         "__on_dev": _on_device(torch.Tensor, torch.device(ctx.device), plan.block), "__write": _write_in_place}
    e = _Emitter(plan, ctx, g, autograd_for)
    body = e.body()
    lines = e.head() + body + e.tail(inplace_writes)
    src = "\n".join(text for text, _ in lines) + "\n"
    line_ops = {k + 1: what for k, (_, what) in enumerate(lines) if what is not None}
    fname = "<paddle_compat block %d of program %d #%d>" % (plan.block.idx, plan.program._uid, next(_ids))
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    exec(compile(src, fname, "exec"), g)
    debug.show(fname, src)
    return LoweredBlock(g["__run"], plan, line_ops, src)


class _Emitter:
    """Writes the function's lines as (text, (op, names) or None); the op marks lines a failure names."""

    def __init__(self, plan, ctx, g, autograd_for):
        self.plan, self.ctx, self.g, self.autograd_for = plan, ctx, g, autograd_for
        self.names = _Names()
        self.nan = NanRuntime(g) if any(s.nan_out or getattr(s, "nan_hooks", ()) for s in plan.steps
                                        if not isinstance(s, FreeStep)) else None

    def arg(self, a):
        if a is None:
            return "None"
        if isinstance(a, Ref):
            return self.names.ref(a)
        return "[%s]" % ", ".join(self.arg(x) for x in a)

    def out(self, o):
        if o is None:
            return "_"
        if isinstance(o, Ref):
            return self.names.ref(o)
        return "[%s]" % ", ".join(self.names.ref(x) for x in o) if o else "_"

    def body(self):
        lines = []
        # a loss seed only the regions read, which take it as None (plan.unit_seed_fills), is not made; a
        # substitute autograd (autograd_for) gets the seed tensors themselves
        unmade = set(self.plan.unit_fills) if self.autograd_for is None else set()
        skipped = set()
        for s in self.plan.steps:
            if isinstance(s, OpStep):
                if s.index in unmade:
                    skipped.update(self.names.ref(o) for o in s.outs if isinstance(o, Ref))
                    continue
                lines += self.op_lines(s)
            elif isinstance(s, RegionStep):
                lines += self.region_lines(s)
            else:
                dead = sorted((n for n in (self.names.ref(r) for r in s.refs) if n not in skipped),
                              key=lambda n: (n[0], int(n[1:])))
                if dead:
                    lines.append(("del " + ", ".join(dead), None))
        return [("        " + text, what) for text, what in lines]

    def op_lines(self, s):
        kname = "k%d" % s.index
        self.g[kname] = s.kernel.factory(s.op, self.ctx)
        call = "%s(%s)" % (kname, ", ".join(self.arg(a) for a in s.args))
        targets = [self.out(o) for o in s.outs]
        if len(targets) > 1:
            call = "(%s,) = %s" % (", ".join(targets), call)
        elif targets:
            call = "%s = %s" % (targets[0], call)
        lines = [(call + "  # " + _comment(s.op, s.index), (s.op, self.names))]
        lines += self.nan_lines(s.nan_out)
        for grad_op, grad_name, name in s.nan_hooks:
            lines.append(("__nan_hook(%d, %s)" % (self.nan.entry(grad_op, grad_name), self.names(name)), None))
        for dst, src in s.lod_shares:
            lines.append(("%s = %s" % (self.names.lod(dst), self.names.lod(src)), None))
        for n in s.detach:
            v = self.names(n)
            lines.append(("if %s.requires_grad: %s = %s.detach()" % (v, v, v), None))
        for n in s.leaves:      # a value without a graph that a later backward differentiates (plan.mid_leaves)
            v = self.names(n)
            lines.append(("if not %s.requires_grad: %s = %s.detach().requires_grad_(True)" % (v, v, v), None))
        return lines

    def nan_lines(self, checked):
        if not checked:
            return []
        pairs = "".join("(%d, %s), " % (self.nan.entry(op, n), self.names(n)) for op, n in checked)
        return [("__nan_out((%s))" % pairs, None)]

    def region_lines(self, s):
        op = self.plan.block.ops[s.index]
        names = self.names
        if s.outputs:
            ag = "__ag_graph" if s.region.create_graph else "__ag_keep" if s.retain_graph else "__ag"
            unit = s.region.unit_seeds   # passed as None (ones); a substitute autograd gets the tensors
            if self.autograd_for is not None:
                unit = ()
                ag = "__ag%d" % s.index
                self.g[ag] = self.autograd_for(self.plan.block, s.region)
            text = "%s, = %s((%s,), (%s,), (%s,))" % (
                ", ".join(names(w) for w in s.outputs), ag, ", ".join(names(t) for t in s.targets),
                ", ".join(("e_" if x in self.plan.entry_aliases else "") + names(x) for x in s.inputs), ", ".join("None" if d in unit else names(d) for d in s.seeds))
        else:
            text = "pass"
        lines = [(text + "  # autograd of ops %d..%d" % (s.region.op_idx[0], s.region.op_idx[-1]), (op, names))]
        lines += self.nan_lines(s.nan_out)
        for dst, src in s.lod_shares:
            lines.append(("%s = %s" % (self.names.lod(dst), self.names.lod(src)), None))
        if s.last:
            lines.append(("__set_grad(False)", None))
        return lines

    def head(self):
        plan, names, scope = self.plan, self.names, self.ctx.scope
        mode = "__prev" if plan.grad_mode is None else str(bool(plan.grad_mode))
        lines = ["def __run(__feeds):", "    __prev = __is_grad()", "    try:", "        __set_grad(%s)" % mode]
        for k, n in enumerate(plan.feeds):
            if n in plan.feed_lod:   # (a sub-block may write a LoD into a variable it was given without one)
                lines.append("        %s, %s = __feeds[%d]  # feed %s" % (names(n), names.lod(n), k, _safe(n)))
            else:
                lines.append("        %s = __feeds[%d]  # feed %s" % (names(n), k, _safe(n)))
        on_cpu = str(self.ctx.device) == "cpu"
        for n in plan.scope_reads:
            local = names(n)
            self.g["h_" + local] = scope.find_var(n)
            # off the CPU, a scope value that lives elsewhere (a state set from numpy, a CPU-loaded checkpoint)
            # is moved to the run's device once and kept there, as Paddle's data transform moved it per op
            # (a core.SelectedRows a test put in the scope by hand is made torch's sparse COO form there too)
            by_value = on_cpu and not (hasattr(self.g["h_" + local].value, "_to_torch") and
                                       rows_as_torch(plan.block, n))
            read = "h_%s.value" % local if by_value else "__on_dev(h_%s)" % local
            read = "__shared(%s)" % read if plan.shared_params else read
            lines.append("        %s = %s  # scope %s" % (local, read, _safe(n)))
            if n in plan.lod_reads:   # the scope may hold offsets as lists (set by the user): tensors here
                lines.append("        %s = __lod(h_%s.lod, __dev)" % (names.lod(n), local))
        for n in plan.grad_leaves:
            lines.append("        if not %s.requires_grad: %s.requires_grad_(True)" % (names(n), names(n)))
        for n in sorted(plan.entry_aliases):    # the entry value of a leaf an op rewrites before the backward
            lines.append("        e_%s = %s" % (names(n), names(n)))
        return [(text, None) for text in lines]

    def tail(self, inplace_writes):
        plan, names = self.plan, self.names
        lines = []
        for w in plan.writes:
            local = names(w)
            self.g.setdefault("h_" + local, self.ctx.scope.var(w))
            if hasattr(self.g["h_" + local].value, "_to_torch") and rows_as_torch(plan.block, w):
                # the scope holds a core.SelectedRows a test made by hand: fill it (its rows, height, values)
                self.g["__write_rows"] = write_rows
                lines.append("        __write_rows(h_%s, %s)  # scope %s" % (local, local, _safe(w)))
            elif inplace_writes:
                lines.append("        __write(h_%s, %s)  # scope %s" % (local, local, _safe(w)))
            else:
                lines.append("        h_%s.value = %s  # scope %s" % (local, local, _safe(w)))
            if w in plan.lod_writes:
                lines.append("        h_%s.lod = %s" % (local, names.lod(w)))
        fetched = "".join("(%s, %s), " % (names(f), names.lod(f) if lod else "None")
                          for f, lod in zip(plan.fetches, plan.fetch_lod))
        lines += ["        return (%s)" % fetched, "    finally:", "        __set_grad(__prev)"]
        return [(text, None) for text in lines]


def _comment(op, index):
    def show(slots):
        parts = []
        for slot, names in slots.items():
            if names:
                shown = ", ".join(names[:3]) + (", ...%d" % len(names) if len(names) > 3 else "")
                parts.append("%s=%s" % (slot, shown))
        return ", ".join(parts)
    fused = op.attrs.get("fused_from")
    text = "op %d %s(%s) -> %s%s" % (index, op.type, show(op.inputs), show(op.outputs),
                                   "  [fused: %s]" % fused if fused else "")
    return _safe(text)


def _safe(text):
    """Comment text: names come from the program (perhaps a loaded file), and nothing in them may end the
    comment's line."""
    return "".join(c if c.isprintable() else "?" for c in text)


def rows_as_torch(block, name):
    """Whether a core.SelectedRows the scope holds for `name` reaches the kernels as a torch sparse tensor: not
    when an op declared native_rows (its kernel reads the SelectedRows itself: kernels/table_ops.py) reads it."""
    return not any(info(op.type).native_rows and name in op.input_arg_names for op in block.ops)


def write_rows(holder, value):
    """An op's output into the core.SelectedRows the scope holds (Paddle's kernels fill the variable's own
    SelectedRows): a row-sparse result gives its rows, height and values, a dense one its values only."""
    rows = holder.value
    if hasattr(value, "_to_torch"):     # a table op's own SelectedRows result
        holder.value = value
    elif getattr(value, "is_sparse", False):
        rows._rows = value._indices()[0].tolist()
        rows._height = int(value.shape[0])
        rows._value = value._values().detach()
    else:
        rows._value = value.detach() if hasattr(value, "detach") else value


def _write_in_place(holder, value):
    """A scope write that keeps the scope tensor's storage (a captured graph reads and writes it there)."""
    old = holder.value
    if old is not value and getattr(old, "shape", None) == getattr(value, "shape", 0) and \
            getattr(old, "dtype", None) == getattr(value, "dtype", 0) and \
            getattr(old, "device", None) == getattr(value, "device", 0) and not getattr(old, "is_sparse", True):
        with _no_grad():
            old.copy_(value)
        return
    holder.value = value


def _no_grad():
    return torch.no_grad()


def _on_device(tensor_type, device, block=None):
    def read(holder):
        v = holder.value
        if hasattr(v, "_to_torch"):     # a core.SelectedRows put in the scope by hand (see rows_as_torch)
            return v._to_torch(device) if block is None or rows_as_torch(block, holder.name) else v
        if isinstance(v, tensor_type) and v.device != device:
            moved = v.detach().to(device)
            v = holder.value = moved.requires_grad_(True) if v.requires_grad else moved
        return v
    return read


def _shared(tensor_type):
    return lambda value: value.data if isinstance(value, tensor_type) else value
