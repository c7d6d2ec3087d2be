"""fleet.utils.utils: loading, saving and checking programs around fleet training (Paddle 1.8's helpers).

Programs are read and written as Paddle's binary ProgramDesc. The protobuf text format (is_text=True,
Paddle's .pbtxt files) is not provided: paddle_compat carries no copy of Paddle's framework.proto schema
to print or parse it.
"""

import logging

from .....ir import Program, VarType
from .... import io

__all__ = ["load_program", "save_program", "check_pruned_program_vars"]

_logger = logging.getLogger("paddle_compat.fleet_utils")


def _no_text(fn):
    raise NotImplementedError("%s(is_text=True): the protobuf text format of programs is not supported by "
                              "paddle_compat; use the binary ProgramDesc (is_text=False)" % fn)


def load_program(model_filename, is_text=False):
    if is_text:
        _no_text("load_program")
    with open(model_filename, "rb") as f:
        return Program.parse_from_string(f.read())


def save_program(program, model_filename="__model__", is_text=False):
    if is_text:
        _no_text("save_program")
    with open(model_filename, "wb") as f:
        f.write(program.desc.serialize_to_string())


def check_pruned_program_vars(train_prog, pruned_prog):
    """True if every persistable of the pruned program is in the training program with its shape and dtype
    (feed/fetch holders aside); each mismatch or missing variable is logged."""
    ok = True
    for v in pruned_prog.list_vars():
        if not io.is_persistable(v) or v.type in (VarType.FEED_MINIBATCH, VarType.FETCH_LIST):
            continue
        t = train_prog.global_block().vars.get(v.name)
        if t is None:
            _logger.error("variable '%s' of the pruned program is not in the train program", v.name)
            continue
        if tuple(v.shape) != tuple(t.shape) or v.dtype != t.dtype:
            _logger.error("variable %s does not match: pruned program shape %s dtype %s, train program shape %s "
                          "dtype %s", v.name, v.shape, v.dtype, t.shape, t.dtype)
            ok = False
    return ok
