"""The pserver's optimize sub-blocks, lowered once (codegen.lower_block) over the pserver's scope, with
the received gradient parts as feeds.

A whole step (the LR block, then every optimize block, in the program's order) is also lowered as ONE
generated function over a program that concatenates those blocks: one Python call per step instead of
one per block. It runs when a step brings every block's gradient (always, for our trainers); a push
with only some blocks' gradients runs those blocks' own functions.
"""

import torch

from ...ir import Program
from ..lowering.codegen import lower_block
from ..selected_rows import make_rows, unpack_rows
from .errors import PsError
from .records import pserver_plan

__all__ = ["OptimizeRunner"]


class _Block:
    __slots__ = ("idx", "param", "grad", "inputs", "feeds", "baks", "fn", "zeros", "rows", "sparse")

    def __init__(self, d):
        self.idx, self.param, self.grad = d.block, d.param, d.grad
        self.inputs, self.baks = list(d.inputs), list(d.baks)
        self.feeds = list(d.feeds)     # inputs, then the trainer id var with DC-ASGD
        self.rows, self.sparse = int(d.rows), bool(d.sparse)
        self.fn = None
        self.zeros = None


def _fused_program(program, block_ids):
    """A one-block program holding the ops of `block_ids` in order, or None if their names collide or an op
    holds sub-blocks (an LR schedule's Switch: its blocks run with the program they belong to)."""
    fused = Program()
    fb = fused.global_block()
    gb = program.global_block()
    for v in gb.vars.values():
        fb.vars[v.name] = v._copy_meta_to(fb)
    for i in block_ids:
        for v in program.block(i).vars.values():
            if v.name in fb.vars:
                return None
            fb.vars[v.name] = v._copy_meta_to(fb)
        for op in program.block(i).ops:
            if any(hasattr(v, "ops") or (isinstance(v, (list, tuple)) and v and hasattr(v[0], "ops"))
                   for v in op.attrs.values()):
                return None
            fb.ops.append(op.copy_to(fb))
    fused._bump()
    return fused


class OptimizeRunner:
    def __init__(self, program, scope, device, executor):
        info = pserver_plan(program)
        self.program, self.scope, self.device, self.executor = program, scope, device, executor
        self.blocks = [_Block(d) for d in info.blocks]
        self.by_grad = {b.grad: b for b in self.blocks}
        self.by_input = {n: b for b in self.blocks for n in b.inputs}
        self.dc_asgd = info.dc_asgd
        # async LR schedule: the per-trainer step counters a push adds to (the LR block sums them)
        self.counters = frozenset(info.step_counters)
        self.expected = frozenset(n for b in self.blocks for n in b.inputs) | self.counters
        self.lr_idx = info.lr_block
        self.lr = None
        if self.lr_idx >= 0:
            self._placeholders(program, self.lr_idx)
            self.lr = lower_block(program, self.lr_idx, scope, device, executor=executor)
        # the whole step in one function
        ids = ([self.lr_idx] if self.lr_idx >= 0 else []) + [b.idx for b in self.blocks]
        feeds = []
        for b in self.blocks:
            feeds += [n for n in b.feeds if n not in feeds]
        self.step_feeds = feeds
        fused = _fused_program(program, ids) if self.blocks else None
        self.step_fn = lower_block(fused, 0, scope, device, feed_names=feeds, executor=executor) \
            if fused is not None else None
        self._tids = {}

    def _placeholders(self, program, lr_idx):
        """Vars the LR block computes and the optimize blocks read exist before the first step."""
        gb = program.global_block()
        for op in program.block(lr_idx).ops:
            for n in op.output_arg_names:
                v = gb.vars.get(n)
                holder = self.scope.var(n) if v is not None and v.persistable else None
                if holder is not None and holder.value is None:
                    holder.value = torch.zeros([max(int(d), 1) for d in v.shape] or [1])

    def _block_fn(self, b):
        if b.fn is None:
            b.fn = lower_block(self.program, b.idx, self.scope, self.device, feed_names=b.feeds,
                               executor=self.executor)
        return b.fn

    def _tid(self, trainer_id):
        t = self._tids.get(trainer_id)
        if t is None:
            t = self._tids[trainer_id] = torch.tensor([trainer_id], dtype=torch.int64)
        return t

    def _zeros(self, name):
        """The part of a trainer that has finished: zeros, or no rows for a row-sparse gradient (a
        table shard's dense zeros would be as large as the shard)."""
        b = self.by_input[name]
        if b.zeros is None:
            p = self.scope.find_var(b.param).value
            if b.sparse:
                b.zeros = make_rows(torch.zeros(0, dtype=torch.int64, device=p.device),
                                    p.new_zeros((0,) + tuple(p.shape[1:])), p.shape[0], coalesced=True)
            else:
                b.zeros = torch.zeros_like(p)
        return b.zeros

    def unpack(self, names, tensors):
        """Received gradients as the optimize blocks take them: on this pserver's device, a (rows, values)
        pair as a SelectedRows of its block's height."""
        out = []
        for n, t in zip(names, tensors):
            if isinstance(t, (tuple, list)):
                rows, values = t
                if self.device != "cpu":
                    rows, values = rows.to(self.device), values.to(self.device)
                b = self.by_input[n]
                t = unpack_rows((rows, values), b.rows)
                if b.baks:    # DC-ASGD's compensation is elementwise over the whole block
                    t = t.to_dense()
            elif self.device != "cpu":
                t = t.to(self.device)
            out.append(t)
        return out

    def check_names(self, trainer_id, names, endpoint):
        if not self.expected.issuperset(names):
            unknown = [n for n in names if n not in self.expected]
            raise PsError("pserver %s got gradient(s) %s from trainer %d, which it does not optimize (trainer and "
                          "pserver transpiled differently?)" % (endpoint, ", ".join(unknown[:5]), trainer_id))

    def run_sync(self, grads):
        """One sync step: grads = {gradient part name: tensor} from every trainer of the round; parts of
        trainers that have finished count as zero."""
        if self.step_fn is not None:
            with torch.no_grad():    # one context for the step, not one per optimizer kernel
                self.step_fn([grads[n] if n in grads else self._zeros(n) for n in self.step_feeds])
            return
        if self.lr is not None:
            self.lr([])
        for b in self.blocks:
            self._block_fn(b)([grads[n] if n in grads else self._zeros(n) for n in b.inputs])

    def run_async(self, trainer_id, grads):
        """Apply one trainer's gradients at once (async mode); the LR schedule advances once per push (the
        push adds the trainer's step to its step counter, which the LR block sums with the others)."""
        tid = self._tid(trainer_id)
        if self.counters:
            grads = dict(grads)
            for n in self.counters.intersection(grads):
                h = self.scope.var(n)
                h.value = h.value + grads.pop(n).to(h.value.device)
        if self.step_fn is not None and len(grads) == len(self.blocks):
            self.step_fn([tid if n not in grads else grads[n] for n in self.step_feeds])
            return
        if self.lr is not None:
            self.lr([])
        for name, g in grads.items():
            b = self.by_grad[name]
            self._block_fn(b)([g, tid] if self.dc_asgd else [g])

    def remember_pull(self, trainer_id, names):
        """DC-ASGD: keep the copy of each block this trainer now holds."""
        for b in self.blocks:
            if b.param in names and b.baks:
                self.scope.var(b.baks[trainer_id]).value = self.scope.find_var(b.param).value.clone()
