"""A reference interpreter: runs a block one op at a time with the same kernels as the generated code, with
none of the lowering's optimisations (no plan, no generated code, no fusion, no pruning, no freeing), so
that a differential test can hold the lowering to it (tests/unit/test_lowering_differential.py).

Values live in a dict by variable name and are read from the scope when first needed; LoD follows Paddle's
ShareLoD; the gradient ops recorded by append_backward run as torch autograd over the tape the forward ops
left, one torch.autograd.grad call per backward region (as Paddle computed them op by op, the region's
gradients are what autograd gives). It takes lower_block's arguments and returns a callable of the same
protocol, so a control-flow op's body is interpreted too. About 10-50x slower per op than generated code:
a testing tool, not a runtime.
"""

from ...ir import EOFException, lod_as_tensors
from ...ir.dtypes import FLOAT_TYPES
from ...ir.lazy import torch
from ...ops import is_differentiable
from .autograd_region import autograd, find_regions
from .grad_lod import region_lod_shares
from .emit import rows_as_torch, write_rows
from .ctx import LowerCtx, LoweringError, OpRunError, missing_value, op_failure
from .op_checks import kernel_of
from .plan import entry_aliases, grad_leaves, later_backward_leaves, mid_leaves

__all__ = ["interpret_block", "Interpreted"]


def interpret_block(program, block_idx, scope, device, feed_names=(), fetch_names=(), executor=None,
                    feed_lod=(), autograd_for=None, sub_block=False, shared_params=False, check_nan_inf=None,
                    inplace_writes=False, fuse=False, write_scope=True):
    """lower_block's signature (check_nan_inf, inplace_writes and fuse are accepted and ignored)."""
    ctx = LowerCtx(program, program.block(block_idx), scope, device, executor, shared_params, False,
                   lower=interpret_block)
    return Interpreted(ctx, feed_names, fetch_names, feed_lod, autograd_for, sub_block, write_scope)


class Interpreted:
    """interpreted(feeds) -> ((value, LoD), ...) per fetch, as a LoweredBlock."""

    def __init__(self, ctx, feed_names, fetch_names, feed_lod, autograd_for, sub_block, write_scope=True):
        self._torch = torch
        self.ctx, self.block = ctx, ctx.block
        self.feed_names, self.fetch_names = list(feed_names), list(fetch_names)
        self.feed_lod = set(feed_lod)
        self.sub_block = sub_block
        self.write_scope = write_scope
        self.autograd_for = autograd_for
        self.regions = find_regions(self.block, fetch_names)
        self.in_region = set(i for r in self.regions for i in r.op_idx)
        later = later_backward_leaves(ctx.program, self.block)
        self.grad_on = bool(self.regions) or later is not None
        self.leaves = grad_leaves(self.block, self.regions, later)
        self.mid_leaves = mid_leaves(self.block, self.regions)
        self.entry_aliases = entry_aliases(self.block, self.regions)
        self.no_grad = getattr(ctx.program, "_autograd_no_grad", set())
        self.last_region = max((r.start for r in self.regions), default=-1)
        self.kernels = {}
        for i, op in enumerate(self.block.ops):     # built once, in op order, as the lowering builds them
            if i not in self.in_region and op.type not in ("feed", "fetch"):    # the executor's own
                spec = kernel_of(self.block, i, op)
                self.kernels[i] = (spec, spec.factory(op, ctx))
        self.fetch_persistable = [self._persistable(f) for f in self.fetch_names]
        self.code = None

    def _persistable(self, name):
        v = self.block._find_var_recursive(name)
        return bool(v is not None and v.persistable)

    def __call__(self, feeds):
        torch = self._torch
        prev = torch.is_grad_enabled()
        try:
            torch._C._set_grad_enabled(prev if self.sub_block else self.grad_on)
            run = _Run(self, feeds)
            region_at = {r.start: r for r in self.regions}
            for i, op in enumerate(self.block.ops):
                if i in region_at:
                    run.region(region_at[i], i == self.last_region)
                if i in self.kernels:
                    run.op(i, op, *self.kernels[i])
            out = [(run.get(f, None), run.lods.get(f)) for f in self.fetch_names]
            if self.write_scope:
                run.write_back()
            return out
        finally:
            torch._C._set_grad_enabled(prev)


class _Run:
    """One step's values: name -> value, name -> LoD (a name is present when the variable has a LoD)."""

    def __init__(self, interp, feeds):
        self.it, self.block, self.ctx = interp, interp.block, interp.ctx
        self.env, self.lods, self.written = {}, {}, []
        self.entry = {}
        for n, f in zip(interp.feed_names, feeds):
            if n in interp.feed_lod:
                self.env[n], self.lods[n] = f
            else:
                self.env[n] = f
            self._leaf(n)

    def _leaf(self, n):
        v = self.env[n]
        if n in self.it.leaves and hasattr(v, "requires_grad_") and not v.requires_grad:
            v.requires_grad_(True)
        if n in self.it.entry_aliases:
            self.entry.setdefault(n, v)

    def has(self, n):
        if n in self.env:
            return True
        holder = self.ctx.scope.find_var(n) if self.ctx.scope is not None else None
        return holder is not None and holder.value is not None

    def get(self, n, op):
        if n in self.env:
            return self.env[n]
        holder = self.ctx.scope.find_var(n) if self.ctx.scope is not None else None
        if holder is None or holder.value is None:
            raise missing_value(n, self.block._find_var_recursive(n), op)
        value = holder.value
        torch = self.it._torch
        if hasattr(value, "_to_torch") and rows_as_torch(self.block, n):   # a hand-made core.SelectedRows
            value = value._to_torch(self.ctx.device)
        if isinstance(value, torch.Tensor):
            if str(value.device) != str(torch.device(self.ctx.device)):
                moved = value.detach().to(self.ctx.device)
                value = holder.value = moved.requires_grad_(True) if value.requires_grad else moved
            if self.ctx.shared_params:
                value = value.data
        self.env[n] = value
        self._leaf(n)
        v = self.block._find_var_recursive(n)
        if v is not None and v.lod_level > 0:
            self.lods[n] = lod_as_tensors(holder.lod, self.ctx.device)
        return self.env[n]

    def set(self, n, value):
        self.env[n] = value
        if n not in self.written:
            self.written.append(n)

    def region(self, r, last):
        op = self.block.ops[r.start]
        if r.wanted:
            fn = autograd if self.it.autograd_for is None else self.it.autograd_for(self.block, r)
            grads = fn([self.get(t, op) for t in r.targets],
                       [self.entry[x] if x in self.entry else self.get(x, op) for x in r.wanted_forward()],
                       [None if s in r.unit_seeds and fn is autograd else self.get(s, op) for s in r.seeds], **({} if fn is not autograd else {"retain_graph": True, "create_graph": r.create_graph}))
            for w, g in zip(r.wanted, grads):
                self.set(w, g)
            shares = region_lod_shares(self.block, r, self.lods)
            for w in r.wanted:
                self.lods.pop(w, None)
            for w, src in shares:
                self.lods[w] = self.lods[src]
        if last:
            self.it._torch._C._set_grad_enabled(False)

    def op(self, i, op, spec, kernel):
        args = []
        for s in spec.inputs:
            slot, many = s.rstrip("*"), s.endswith("*")
            if slot.startswith("@"):
                cur = [self.get(a, op) if self.has(a) else None for a in op.outputs.get(slot[1:], [])]
                args.append(cur if many else (cur[0] if cur else None))
                continue
            names = op.inputs.get(slot, [])
            args.append([self.get(a, op) for a in names] if many else (self.get(names[0], op) if names else None))
        first_lod = next((a for names in op.inputs.values() for a in names if a in self.lods), None)
        for s in spec.lod_in:
            slot, many = s.rstrip("*"), s.endswith("*")
            names = op.outputs.get(slot[1:], []) if slot.startswith("@") else op.inputs.get(slot, [])
            args.append([self.lods.get(a) for a in names] if many else (self.lods.get(names[0]) if names else None))
        try:
            result = kernel(*args)
        except (OpRunError, LoweringError, EOFException):   # (EOF ends a reader's pass: the user catches it)
            raise
        except Exception as e:
            raise op_failure(op, e, self.env.get) from e
        self._unpack(op, spec, result)
        self._share_lod(op, spec, first_lod)
        self._detach(op, spec)
        for n in op.output_arg_names:
            v = self.env.get(n)
            if n in self.it.mid_leaves and v is not None and not v.requires_grad:
                self.env[n] = v.detach().requires_grad_(True)

    def _unpack(self, op, spec, result):
        targets = [(s, False) for s in spec.outputs] + [(s, True) for s in spec.lod_out]
        if not targets:
            return
        values = [result] if len(targets) == 1 else list(result)
        for (s, lod), value in zip(targets, values):
            slot, many = s.rstrip("*"), s.endswith("*")
            names = op.outputs.get(slot, [])
            pairs = list(zip(names, value)) if many else ([(names[0], value)] if names else [])
            for n, v in pairs:
                if lod:
                    self.lods[n] = v
                else:
                    self.set(n, v)

    def _share_lod(self, op, spec, first_lod):
        computed = set(s.rstrip("*") for s in spec.lod_out)
        for slot, names in op.outputs.items():
            for a in names:
                v = self.block._find_var_recursive(a)
                if v is not None and v.lod_level > 0 and slot not in computed and first_lod is not None and \
                        a != first_lod:
                    self.lods[a] = self.lods[first_lod]

    def _detach(self, op, spec):
        """stop_gradient outputs (and the backward's no-grad variables) carry no gradient."""
        if not is_differentiable(op.type):
            return
        returned = set(spec.output_slots())
        for slot, names in op.outputs.items():
            for a in names:
                v = self.block._find_var_recursive(a)
                val = self.env.get(a)
                if slot in returned and v is not None and (v.stop_gradient or a in self.it.no_grad) and \
                        not v.persistable and v.dtype in FLOAT_TYPES and getattr(val, "requires_grad", False):
                    self.env[a] = val.detach()

    def write_back(self):
        scope = self.ctx.scope
        for n in self.written:
            v = self.block._find_var_recursive(n)
            if v is not None and v.persistable:
                holder = scope.var(n)
                if hasattr(holder.value, "_to_torch") and rows_as_torch(self.block, n):
                    write_rows(holder, self.env[n])     # a hand-made core.SelectedRows: filled (see emit)
                else:
                    holder.value = self.env[n]
                if n in self.lods:
                    holder.lod = self.lods[n]
