"""Lowering-time fusion: several sparse lookups of one embedding table, each sum-pooled per sequence, become
one embedding call and one segment_reduce over all their ids (the CTR pattern: id slots sharing a table);
fc's mul + bias add becomes one addmm (fusion_fc.py); softmax + cross_entropy + mean one autograd node
(fusion_loss.py); runs of optimizer ops become one grouped update
(fusion_optim.py).

This is a plan for the code generator, not a program rewrite: the Program keeps Paddle's lookup_table and
sequence_pool ops (what transpilers and users see); only the generated code changes. Per slot, separate
lookups cost an embedding, a segment_reduce, their backward nodes, and one sparse-gradient addition in
autograd; fused, the whole group costs one of each, which is most of a small CTR step.

A group is every lookup_table of one W (same is_sparse, no padding_idx) whose output is read by exactly one
op, a sequence_pool(SUM, pad_value 0), and by nothing else (no fetch, no other op, not persistable). The
fused op runs where the group's last op ran; a pooled output read before that point keeps its slot out
of the group. Gradient ops are ignored here: the backward region computes them with autograd.
"""

import collections

from ...ir import is_autograd_op
from . import fusion_amp, fusion_fc, fusion_loss, fusion_optim
from ...ir import Operator

FUSED_TYPE = "fused_lookup_seqpool_sum"


def plan(block, fetch_names=()):
    """{op index: replacement Operator, or None to skip that op}; {} when nothing fuses."""
    ops = block.ops
    fetch = set(fetch_names)
    readers = collections.defaultdict(list)      # var -> indices of ordinary ops reading it
    writers = collections.defaultdict(list)
    for i, op in enumerate(ops):
        if is_autograd_op(op):
            continue
        for n in op.input_arg_names:
            readers[n].append(i)
        for n in op.output_arg_names:
            writers[n].append(i)

    candidates = collections.defaultdict(list)   # (W, is_sparse) -> [(lookup idx, pool idx)]
    for i, op in enumerate(ops):
        if op.type != "lookup_table" or is_autograd_op(op) or op.attrs.get("padding_idx", -1) != -1:
            continue
        out = op.output("Out")
        ids = op.input("Ids")
        if len(out) != 1 or len(ids) != 1:
            continue
        ids_var, out_var = block._find_var_recursive(ids[0]), block._find_var_recursive(out[0])
        if ids_var is None or ids_var.lod_level != 1 or len(ids_var.shape) != 2 or ids_var.shape[-1] != 1 or \
                out_var is None or out_var.persistable:
            continue                            # one id per row ([T, 1]) and one LoD level only
        if out[0] in fetch or len(readers[out[0]]) != 1 or len(writers[out[0]]) != 1:
            continue
        j = readers[out[0]][0]
        pool = ops[j]
        if pool.type != "sequence_pool" or str(pool.attrs.get("pooltype", "")).upper() != "SUM" or \
                float(pool.attrs.get("pad_value", 0.0)) != 0.0 or pool.input("X") != out:
            continue
        if any(n in fetch or readers[n] for n in pool.output("MaxIndex")):
            continue
        candidates[(op.input("W")[0], bool(op.attrs.get("is_sparse", False)))].append((i, j))

    replace = {}
    for (w, sparse), members in candidates.items():
        members = _runnable(ops, members, readers, writers, w)
        if len(members) < 2:
            continue
        at = max(j for _, j in members)
        lookups = [ops[i] for i, _ in members]
        pools = [ops[j] for _, j in members]
        fused = Operator(block, FUSED_TYPE,
                         inputs={"Ids": [lk.input("Ids")[0] for lk in lookups], "W": [w]},
                         outputs={"Out": [p.output("Out")[0] for p in pools]},
                         attrs={"is_sparse": sparse, "fused_from": "%d lookup_table + sequence_pool(SUM)" % len(members)},
                         callsite=lookups[0].callsite)
        for i, j in members:
            replace[i] = None
            replace[j] = None
        replace[at] = fused
    replace.update(fusion_fc.plan(block, readers, fetch, skip=replace))   # fc's mul + bias add (fusion_fc.py)
    replace.update(fusion_loss.plan(block, readers, fetch, skip=replace))   # softmax + CE + mean (fusion_loss.py)
    replace.update(fusion_amp.plan(block, readers, fetch, skip=replace))   # AMP's scaling check (fusion_amp.py)
    replace.update(fusion_optim.plan(block, skip=replace))   # optimizer groups (fusion_optim.py)
    return replace


def _runnable(ops, members, readers, writers, w):
    """Drop members whose pooled output is read (or whose ids are rewritten) before the group's last op,
    until the rest is stable."""
    members = sorted(members, key=lambda m: m[1])
    while len(members) >= 2:
        at = members[-1][1]
        first = min(i for i, _ in members)
        if any(first <= k <= at for k in writers[w]):
            return []                           # the table changes inside the group's span
        early = [m for m in members if any(r <= at for r in readers[ops[m[1]].output("Out")[0]]) or
                 any(m[0] < k <= at for k in writers[ops[m[0]].input("Ids")[0]])]
        if not early:
            return members
        members = [m for m in members if m not in early]
    return members
