"""Pserver startup program: the init ops of exactly this pserver's vars (its parameter blocks, their optimizer
state, the learning rate and LR counters), in the original startup order, at block shapes.

Values are sliced correctly: Paddle wrote a whole NumpyArrayInitializer value into each block (a bug);
here a block gets its rows. Random inits: trainers pull their initial weights from the pservers, so a
block only needs some draw of the right distribution, and an unseeded init draws just the block. A seeded
init (seed != 0) draws the whole variable and keeps this block's rows (a `split` op), so a seeded job
starts from exactly the weights a local run with the same seed would have.

A distributed table's shard is never drawn that way: a table at parameter-server scale may not fit one
machine, so each pserver draws only its shard, seeded (when the init is seeded) with a seed derived from
the init's seed and the shard index: reproducible from run to run, but not the draw of a local run with
the same seed. (A NumpyArrayInitializer table is sliced exactly, as any parameter.)
"""

import numpy as np

from ...ir import OP_ROLE_KEY, OpRole, Program, notify_changed
from ...ops import info as op_info
from .ps_pserver_pass import bak_name

__all__ = ["build_pserver_startup"]

_VALUE_KEYS = ("fp32_values", "int32_values", "int64_values", "bool_values")


def _targets(plan, endpoint, src):
    """orig var -> [(target name, target shape, (row offset, rows) or None, table shard index or None)]
    for this pserver."""
    out = {}

    def add(orig, name, shape, rows, shard=None):
        out.setdefault(orig, []).append((name, list(shape), rows, shard))

    for b in plan.ordered_blocks_on(endpoint):
        chain = plan.chains[b.param]
        cut = (b.offset, b.rows) if b.split else None
        shard = b.index if chain.table is not None else None
        add(chain.param, b.name, b.shape, cut, shard)
        for s, kind in chain.state.items():
            if kind == "rows":
                add(s, b.state_name(s), b.shape, cut, shard)
            else:
                add(s, b.state_name(s), src.var(s).shape, None)
    for n in plan.global_vars:
        if n not in plan.lr_outputs:
            add(n, n, src.var(n).shape, None)
    return out


def _values(op):
    for k in _VALUE_KEYS:
        v = op.attrs.get(k)
        if v is not None and len(v):
            return k, v
    return None, None


def _shard_seed(seed, shard):
    """The seed of a table shard's own draw (deterministic; never 0, which would mean unseeded)."""
    return (int(seed) * 1000003 + 7919 * (shard + 1)) % 2147483647 or 1


def _retarget(block, op, orig_var, name, shape, rows, shard=None):
    """Append `op` re-aimed at `name` (a row block of orig_var when `rows` is set; table shard `shard`)."""
    attrs = dict(op.attrs)
    attrs[OP_ROLE_KEY] = int(OpRole.Forward)
    slot = next(k for k, v in op.outputs.items() if orig_var.name in v)
    if rows is None:
        if "shape" in attrs:
            attrs["shape"] = list(shape)
        return block.append_op(type=op.type, inputs=dict(op.inputs), outputs={slot: [name]}, attrs=attrs)
    off, n = rows
    if op.type == "fill_constant":
        attrs["shape"] = list(shape)
        return block.append_op(type=op.type, outputs={slot: [name]}, attrs=attrs)
    if op.type == "assign_value":
        key, vals = _values(op)
        full = np.asarray(vals).reshape([int(d) for d in orig_var.shape])
        attrs[key] = np.ascontiguousarray(full[off:off + n]).reshape(-1)
        attrs["shape"] = list(shape)
        return block.append_op(type=op.type, outputs={slot: [name]}, attrs=attrs)
    if op_info(op.type).random_init:
        if not attrs.get("seed", 0) or shard is not None:
            if attrs.get("seed", 0):
                attrs["seed"] = _shard_seed(attrs["seed"], shard)
            attrs["shape"] = list(shape)
            return block.append_op(type=op.type, outputs={slot: [name]}, attrs=attrs)
        # seeded: draw the whole variable, keep our rows
        full = block.create_var(name="%s@FULL_INIT" % name, shape=orig_var.shape, dtype=orig_var.dtype,
                                persistable=False)
        block.append_op(type=op.type, outputs={slot: [full.name]}, attrs=attrs)
        height = int(orig_var.shape[0])
        sections, outs = [], []
        for i, (a, m) in enumerate([(0, off), (off, n), (off + n, height - off - n)]):
            if m <= 0:
                continue
            sections.append(m)
            if a == off and m == n:
                outs.append(name)
            else:
                outs.append(block.create_var(name="%s@OTHER_ROWS_%d" % (name, i), dtype=orig_var.dtype,
                                             shape=[m] + list(orig_var.shape[1:]), persistable=False).name)
        return block.append_op(type="split", inputs={"X": [full.name]}, outputs={"Out": outs},
                               attrs={OP_ROLE_KEY: int(OpRole.Forward), "axis": 0, "num": 0, "sections": sections})
    raise NotImplementedError("pserver startup: cannot cut the init op '%s' of '%s' into row blocks; initialise "
                              "it with a constant, random or NumpyArray initializer, or set "
                              "config.slice_var_up = False" % (op.type, orig_var.name))


def _step_counter_inits(plan, src, st, block):
    """Async: the per-trainer step counters (first, in Paddle's order). Here each counts the steps its
    trainer pushed, and the first also holds the counter's starting value, so their sum (the LR block's
    counter) is what the single counter would be (Paddle started them at 1 and the counter at -trainers)."""
    done = set()
    for counter, names, _ in plan.step_counters.values():
        cv = src.var(counter)
        start = 0.0
        for op in st.ops:
            if op.type == "fill_constant" and op.output_arg_names == [counter]:
                start = float(op.attrs.get("value", 0.0))
        for t in reversed(range(len(names))):
            block.create_var(name=names[t], shape=cv.shape, dtype=cv.dtype, persistable=True)
            block.append_op(type="fill_constant", outputs={"Out": [names[t]]},
                            attrs={OP_ROLE_KEY: int(OpRole.Forward), "shape": [int(d) for d in cv.shape],
                                   "dtype": int(cv.dtype), "value": start if t == 0 else 0.0,
                                   "force_cpu": True})
            done.add(names[t])
    return done


def build_pserver_startup(plan, main_program, startup_program, endpoint):
    src = main_program.global_block()
    st = startup_program.global_block()
    prog = Program()
    prog.random_seed = startup_program.random_seed
    block = prog.global_block()
    targets = _targets(plan, endpoint, src)
    done = _step_counter_inits(plan, src, st, block)
    for op in st.ops:
        for orig in op.output_arg_names:
            if orig not in targets:
                continue
            ov = st._find_var_recursive(orig) or src.var(orig)
            for name, shape, rows, shard in targets[orig]:
                block.create_var(name=name, shape=shape, dtype=ov.dtype, lod_level=ov.lod_level, persistable=True)
                _retarget(block, op, ov, name, shape, rows, shard)
                done.add(orig)
    # DC-ASGD: each trainer's copy of a block starts at zero; the trainer's first pull sets it
    if plan.dc_asgd and not plan.sync_mode:
        for b in plan.ordered_blocks_on(endpoint):
            pv = src.var(b.param)
            for t in range(plan.trainers):
                n = bak_name(b.name, t)
                block.create_var(name=n, shape=b.shape, dtype=pv.dtype, persistable=True)
                block.append_op(type="fill_constant", outputs={"Out": [n]},
                                attrs={OP_ROLE_KEY: int(OpRole.Forward), "shape": list(b.shape),
                                       "dtype": int(pv.dtype), "value": 0.0})
    prog._is_distributed = True
    prog._endpoints = list(plan.endpoints)
    prog._ps_endpoint = endpoint
    prog._bump()
    notify_changed(prog, "DistributeTranspiler.get_startup_program")
    return prog
