"""save_persistables of a program whose parameters servers hold, described the way Paddle 1.8 describes them
(Program._is_distributed, Program._parameters_on_pservers: a transpiler.details.VarsDistributed) but which is
not one of our transpiled trainer programs (those carry their TrainerPlan and take fluid/io/dist.py's route).
Paddle's own tests build such programs by hand around listen_and_serv servers.

As Paddle 1.8 does: the local persistables other than the remote ones are saved as usual; the chief then
saves each remote parameter ("Optimizer" and "RemotePrefetch" entries) with one recv_save op, which reads its
slices from the servers (in block order when sliced) and writes the whole variable to dirname/<name>.
"""

import os

from ...ir import Program
from .variables import is_persistable

__all__ = ["save_remote_params"]


def _remote_ops(block, dirname, remote):
    for name, parts in remote.items():
        origin = parts[0].origin
        sliced = parts[0].is_slice
        order = sorted(range(len(parts)), key=lambda i: parts[i].block_id) if sliced else range(len(parts))
        block.append_op(type="recv_save", attrs={
            "trainer_id": 0, "shape": list(origin.shape),
            "slice_shapes": [",".join(str(d) for d in parts[i].slice.shape) for i in order],
            "slice_varnames": ["%s.slice.%d" % (parts[i].slice.name, i) for i in order],
            "remote_varnames": [parts[i].slice.name for i in order],
            "endpoints": [parts[i].endpoint for i in order],
            "file_path": os.path.join(dirname, origin.name)})


def save_remote_params(executor, dirname, program, save_local):
    """save_local(local_vars) saves the local persistables (the caller's save_vars, passed in so that this
    module stays below save_load)."""
    remote = program._parameters_on_pservers.get_distributed_vars_by_vtypes(["Optimizer", "RemotePrefetch"],
                                                                           groupby=True)
    if program._distributed_lookup_table:
        # Paddle asks the servers to write it (checkpoint_notify), which hand-built servers here do not do
        raise NotImplementedError("save_persistables: program names a distributed lookup table (%s) but is not a "
                                  "transpiled trainer program; transpile it (DistributeTranspiler) to save its "
                                  "table" % (program._distributed_lookup_table,))
    skip = set(remote)
    local = [v for v in program.list_vars() if is_persistable(v) and v.name not in skip]
    if local:
        save_local(local)
    if program._is_chief and remote:
        prog = Program()
        _remote_ops(prog.global_block(), dirname, remote)
        executor.run(prog)
