"""Rewriting a user's Program in place from a program a pass built (Paddle's transpilers edited the user's
programs in place; old scripts run default_main_program() after transpile)."""

import collections
import copy

from ...ir import Block, notify_changed

__all__ = ["overwrite_program"]

_ATTRS = ("_is_distributed", "_is_chief", "_endpoints", "_ps_endpoint", "_trainers_endpoints",
          "_distributed_lookup_table", "_nccl_comm_num")


def overwrite_program(dst, src, what):
    """Make `dst` hold `src`'s blocks, ops and vars. Variable objects the user holds (the loss, the data
    layers) stay valid: a var of the same name, kind, shape and dtype is kept, not replaced."""
    while len(dst.blocks) < len(src.blocks):
        sb = src.blocks[len(dst.blocks)]
        dst.blocks.append(Block(dst, sb.idx, sb.parent_idx))
    del dst.blocks[len(src.blocks):]
    for sb, db in zip(src.blocks, dst.blocks):
        db.parent_idx = sb.parent_idx
        db.forward_block_idx = sb.forward_block_idx
        new_vars = collections.OrderedDict()
        for name, v in sb.vars.items():
            old = db.vars.get(name)
            if old is not None and type(old) is type(v) and tuple(old.shape) == tuple(v.shape) \
                    and old.dtype == v.dtype and old.lod_level == v.lod_level:
                old._persistable = v.persistable
                old._stop_gradient = v.stop_gradient
                new_vars[name] = old
            else:
                new_vars[name] = v._copy_meta_to(db)
        db.vars = new_vars
        db.ops = [op.copy_to(db) for op in sb.ops]
    for name in _ATTRS:
        setattr(dst, name, copy.copy(getattr(src, name)))
    dst._parameters_on_pservers = src._parameters_on_pservers
    dst.current_block_idx = 0
    dst._bump()
    notify_changed(dst, what)
    return dst
