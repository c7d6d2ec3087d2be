"""The lowering plan as plain data: what one lowered block does, step by step, before any code exists.

plan.py computes a BlockPlan from a block (and the scope it will run over); emit.py turns it into Python
source; interpreter.py runs a block without either. Values are named by their program variable names: a
`Ref(name, lod)` is a variable's value (lod False) or its LoD offsets (lod True).
"""

import dataclasses
from typing import NamedTuple, Optional


class Ref(NamedTuple):
    name: str
    lod: bool = False


class OpStep(NamedTuple):
    """One kernel call. args: per kernel argument a Ref, None (absent), or a tuple of Ref/None (a list
    argument); outs: per returned value a Ref, None (dropped) or a tuple of Refs (a list)."""
    index: int              # the op's index in the block (a fused op: of the last op it replaces)
    op: object              # the Operator run (for a fused group, the fused Operator)
    kernel: object          # its ops.registry.OpDef (kernel factory, slots)
    args: tuple
    outs: tuple
    lod_shares: tuple = ()  # ((output, input), ...): outputs that take the LoD of the op's first LoD input
    detach: tuple = ()      # outputs cut from autograd after the op (stop_gradient, no-grad variables)
    nan_out: tuple = ()     # ((op, name), ...): outputs FLAGS_check_nan_inf checks after the op
    nan_hooks: tuple = ()   # ((grad op, grad name, output), ...): gradients checked as autograd computes them
    leaves: tuple = ()      # outputs made autograd leaves after the op (plan.mid_leaves)


class RegionStep(NamedTuple):
    """One torch.autograd.grad call computing a run of grad ops (autograd_region.Region)."""
    index: int              # the region's first grad op
    region: object
    targets: tuple          # forward names differentiated
    seeds: tuple            # their output gradients (@GRAD names)
    inputs: tuple           # forward names whose gradients are wanted
    outputs: tuple          # the wanted @GRAD names, one per input
    retain_graph: bool      # a later region goes through the same forward
    last: bool              # the last region: grad mode goes off after it
    nan_out: tuple = ()
    lod_shares: tuple = ()  # ((gradient, name), ...): gradients taking that name's LoD (grad_lod.py)


class FreeStep(NamedTuple):
    """Locals dropped before the last backward (activations autograd's graph holds anyway)."""
    refs: tuple


@dataclasses.dataclass(frozen=True)
class CaptureVerdict:
    """Whether the block can run as one CUDA graph (static shapes, no host work); the first reason when not."""
    safe: bool
    reason: Optional[str] = None
    op_index: Optional[int] = None

    def __bool__(self):
        return self.safe


@dataclasses.dataclass(frozen=True)
class BlockPlan:
    program: object
    block: object
    feeds: tuple                 # fed names, in the order of the step's feed list
    feed_lod: frozenset          # feeds given as (tensor, LoD) pairs
    grad_mode: object            # True / False, or None: keep the caller's (a control-flow body)
    scope_reads: tuple           # names read from the scope at entry, in first-use order
    lod_reads: frozenset         # of those, the ones whose LoD is read too
    grad_leaves: tuple           # names made autograd leaves at entry (regions differentiate them)
    steps: tuple                 # OpStep / RegionStep / FreeStep, in order
    writes: tuple                # persistable names written back to the scope at exit
    lod_writes: frozenset        # of those, the ones whose LoD is written too
    fetches: tuple               # fetched names
    fetch_lod: tuple             # per fetch: whether its LoD is returned
    fetch_persistable: tuple     # per fetch: whether it is a scope value (the fetch copies it)
    regions: tuple               # autograd_region.Region, in order
    fused: dict                  # op index -> fused Operator, or None (runs inside one)
    pruned: frozenset            # op indices not run: recomputed forward copies nothing reads
    capture: CaptureVerdict
    shared_params: bool = False  # Hogwild: scope values read through .data
    unit_fills: frozenset = frozenset()   # op indices of loss seeds only regions read (unit_seed_fills)
    entry_aliases: frozenset = frozenset()   # grad leaves a region differentiates at their entry value (plan.py)

    def kernel_steps(self):
        return [s for s in self.steps if isinstance(s, OpStep)]

    def describe(self):
        """A readable listing: one line per step."""
        lines = ["block %d: feeds %s, fetches %s, grad %s, capture: %s"
                 % (self.block.idx, list(self.feeds), list(self.fetches), self.grad_mode,
                    "yes" if self.capture.safe else "no (%s)" % self.capture.reason)]
        for s in self.steps:
            if isinstance(s, OpStep):
                lines.append("  %3d %s" % (s.index, s.op.type))
            elif isinstance(s, RegionStep):
                lines.append("  %3d autograd %s -> %s" % (s.index, list(s.targets), list(s.outputs)))
            else:
                lines.append("      free %s" % ", ".join(r.name + ("(lod)" if r.lod else "") for r in s.refs))
        lines.append("  reads %s; writes %s" % (list(self.scope_reads), list(self.writes)))
        return "\n".join(lines)
