"""The transpiler -> runtime contract of pserver mode: frozen, typed records the transpiler passes produce and
the runtime reads, carried as op attributes on the ops that use them (as Paddle 1.8's listen_and_serv read its
own attributes), so a printed or saved program is the whole truth: a transpiled program written out
(ProgramDesc bytes or program JSON) and read back runs the same.

    TrainerPlan   on a trainer program's send / recv / send_barrier / fetch_barrier / prefetch / geo_sgd ops
    PserverPlan   on a pserver program's listen_and_serv op

Which ops carry which record is declared with each op (ops/defs/distributed_ops.py: ps_plan="trainer" or
"pserver").

Each record is written as one STRING attribute holding JSON (a format that cannot run code when read back).
Nested mappings read back as read-only views and lists as tuples: a record cannot be edited in place; a new
one (dataclasses.replace) is put back with set_trainer_plan / set_pserver_plan.
"""

import dataclasses
import functools
import json
import types
from typing import Mapping, Optional, Tuple

from ...ops import info

__all__ = ["TrainerPlan", "PserverPlan", "OptimizeBlock", "MODES", "TRAINER_PLAN_ATTR", "PSERVER_PLAN_ATTR",
           "carries_plan", "trainer_plan", "pserver_plan", "set_trainer_plan", "set_pserver_plan",
           "mode_of", "is_trainer_program", "is_pserver_program"]

TRAINER_PLAN_ATTR = "trainer_plan"
PSERVER_PLAN_ATTR = "pserver_plan"
MODES = ("sync", "async", "half_async", "geo")


def mode_of(sync_mode, half_async=False, geo=False):
    """The one distributed mode a job runs in (sync_mode has this one source)."""
    if geo:
        return "geo"
    if sync_mode:
        return "sync"
    return "half_async" if half_async else "async"


def _freeze(v):
    if isinstance(v, Mapping):
        return types.MappingProxyType({k: _freeze(x) for k, x in v.items()})
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    return v


def _thaw(v):
    if dataclasses.is_dataclass(v):
        return {f.name: _thaw(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, Mapping):
        return {k: _thaw(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_thaw(x) for x in v]
    return v


class _Record:
    """JSON codec shared by the records; subclasses are frozen dataclasses."""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, (Mapping, list, tuple)) and not isinstance(v, OptimizeBlock):
                object.__setattr__(self, f.name, _freeze(v))
        mode = getattr(self, "mode", None)
        if mode is not None and mode not in MODES:
            raise ValueError("%s: mode must be one of %s, got %r" % (type(self).__name__, MODES, mode))

    def to_attr(self):
        return json.dumps(_thaw(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_attr(cls, text):
        return _decode(cls, text)

    @property
    def sync_mode(self):
        return self.mode == "sync"

    @property
    def half_async(self):
        return self.mode == "half_async"

    @property
    def geo(self):
        return self.mode == "geo"


@dataclasses.dataclass(frozen=True)
class TrainerPlan(_Record):
    """What a trainer needs of its job: who it is, the pservers, the mode, where each variable lives."""
    trainer_id: int
    trainers: int
    pserver_endpoints: Tuple[str, ...]
    mode: str
    plan_digest: str
    wait_port: bool = True
    # {original var: {shape, dtype, kind, pieces: [[endpoint, block var, row offset, rows]]}}
    remote_vars: Mapping = dataclasses.field(default_factory=dict)
    # {table: {height, width, shards: [[endpoint, shard var, row offset, rows]], state: [vars]}}
    tables: Mapping = dataclasses.field(default_factory=dict)
    communicator_flags: Optional[Mapping] = None    # half-async: TrainerRuntimeConfig's flags


@dataclasses.dataclass(frozen=True)
class OptimizeBlock(_Record):
    """One optimize block of a pserver: the parameter block it updates and what feeds it."""
    block: int
    param: str
    grad: str
    inputs: Tuple[str, ...]
    baks: Tuple[str, ...]
    feeds: Tuple[str, ...]      # inputs, then the trainer id var with DC-ASGD
    orig: str
    offset: int
    rows: int
    sparse: bool


@dataclasses.dataclass(frozen=True)
class PserverPlan(_Record):
    """What one pserver serves: its endpoint, the trainers, the mode, its optimize blocks and tables."""
    endpoint: str
    pserver_id: int
    pserver_endpoints: Tuple[str, ...]
    trainers: int
    mode: str
    plan_digest: str
    dc_asgd: bool = False
    blocks: Tuple[OptimizeBlock, ...] = ()
    lr_block: int = -1
    step_counters: Tuple[str, ...] = ()     # async: per-trainer step counters a push adds to
    placement: Tuple = ()                   # [[block var, shape]] in dispatch order
    local_vars: Mapping = dataclasses.field(default_factory=dict)   # see ps_pserver_pass.local_vars
    tables: Mapping = dataclasses.field(default_factory=dict)       # see ps_table_pserver.table_blocks

    def __post_init__(self):
        object.__setattr__(self, "blocks", tuple(b if isinstance(b, OptimizeBlock) else OptimizeBlock(**b)
                                                 for b in self.blocks))
        super().__post_init__()


@functools.lru_cache(maxsize=256)
def _decode(cls, text):
    d = json.loads(text)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(d) - names)
    if unknown:
        raise ValueError("%s attribute holds unknown fields %s (a program from a newer paddle_compat?)"
                         % (cls.__name__, unknown))
    return cls(**d)


def carries_plan(op, kind):
    """Whether `op` is one that carries the `kind` record ("trainer" or "pserver"), as its declaration says."""
    return info(op.type).ps_plan == kind


def _find(program, attr, cls, kind):
    if program is None:
        return None
    for op in program.global_block().ops:
        if not carries_plan(op, kind):
            continue
        text = op.attrs.get(attr)
        if text:
            return _decode(cls, text)
    return None


def trainer_plan(program):
    """The TrainerPlan of a transpiled trainer program (main or startup), or None."""
    return _find(program, TRAINER_PLAN_ATTR, TrainerPlan, "trainer")


def pserver_plan(program):
    """The PserverPlan of a transpiled pserver program (on its listen_and_serv op), or None."""
    return _find(program, PSERVER_PLAN_ATTR, PserverPlan, "pserver")


def is_trainer_program(program):
    return trainer_plan(program) is not None


def is_pserver_program(program):
    return pserver_plan(program) is not None


def set_trainer_plan(program, plan):
    """Put `plan` on every trainer-side RPC op of `program`'s blocks."""
    text = plan.to_attr()
    n = 0
    for block in program.blocks:
        for op in block.ops:
            if carries_plan(op, "trainer"):
                op.attrs[TRAINER_PLAN_ATTR] = text
                n += 1
    if n:
        program._bump()
    return n


def set_pserver_plan(program, plan):
    text = plan.to_attr()
    n = 0
    for op in program.global_block().ops:
        if carries_plan(op, "pserver"):
            op.attrs[PSERVER_PLAN_ATTR] = text
            n += 1
    if not n:
        raise ValueError("a pserver program without listen_and_serv cannot carry its PserverPlan")
    program._bump()
    return n
