"""The pserver's optimize sub-blocks, each lowered once (codegen.lower_block) over the pserver's scope, with
the received gradient parts as feeds."""

import torch

from ..lowering.codegen import lower_block
from .errors import PsError

__all__ = ["OptimizeRunner"]


class _Block:
    __slots__ = ("idx", "param", "grad", "inputs", "feeds", "baks", "fn", "zeros")

    def __init__(self, d):
        self.idx, self.param, self.grad = d["block"], d["param"], d["grad"]
        self.inputs, self.baks = list(d["inputs"]), list(d["baks"])
        self.feeds = list(d["feeds"])     # inputs, then the trainer id var with DC-ASGD
        self.fn = None
        self.zeros = None


class OptimizeRunner:
    def __init__(self, program, scope, device, executor):
        info = program._dist_info
        self.scope, self.device = scope, device
        self.blocks = [_Block(d) for d in info["blocks"]]
        self.by_grad = {b.grad: b for b in self.blocks}
        self.lr = None
        self.dc_asgd = bool(info.get("dc_asgd"))
        self.expected = set()
        for b in self.blocks:
            self.expected.update(b.inputs)
        lr_idx = info.get("lr_block", -1)
        if lr_idx >= 0:
            self._placeholders(program, lr_idx)
            self.lr = lower_block(program, lr_idx, scope, device, executor=executor)
        for b in self.blocks:
            b.fn = lower_block(program, b.idx, scope, device, feed_names=b.feeds, executor=executor)
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

    def _tid(self, trainer_id):
        t = self._tids.get(trainer_id)
        if t is None:
            t = self._tids[trainer_id] = torch.tensor([trainer_id], dtype=torch.int64)
        return t

    def check_names(self, trainer_id, names, endpoint):
        unknown = [n for n in names if n not in self.expected]
        if unknown:
            raise PsError("pserver %s got gradient(s) %s from trainer %d, which it does not optimize (trainer and "
                          "pserver transpiled differently?)" % (endpoint, ", ".join(unknown[:5]), trainer_id))

    def run_lr(self):
        if self.lr is not None:
            self.lr([])

    def run_sync(self, grads):
        """One sync step: grads = {gradient part name: tensor} from every trainer of the round; parts of
        trainers that have finished count as zero."""
        self.run_lr()
        for b in self.blocks:
            feeds = []
            for n in b.inputs:
                g = grads.get(n)
                if g is None:
                    if b.zeros is None:
                        b.zeros = torch.zeros_like(self.scope.find_var(b.param).value)
                    g = b.zeros
                feeds.append(g)
            b.fn(feeds)

    def run_async(self, trainer_id, grads):
        """Apply one trainer's gradients at once (async mode); the LR schedule advances once per push."""
        self.run_lr()
        for name, g in grads.items():
            b = self.by_grad.get(name)
            if b is None:
                continue
            b.fn([g, self._tid(trainer_id)] if self.dc_asgd else [g])

    def remember_pull(self, trainer_id, names):
        """DC-ASGD: keep the copy of each block this trainer now holds."""
        for b in self.blocks:
            if b.param in names and b.baks:
                self.scope.var(b.baks[trainer_id]).value = self.scope.find_var(b.param).value.clone()
