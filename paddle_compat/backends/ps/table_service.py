"""The pserver's side of a distributed lookup table, added to the service as an extension:

  prefetch(trainer_id, names, ids)   rows of the shards asked for (one call carries every table of a
                                     trainer's step), by running each shard's prefetch block
  save_tables(dirname, with_state)   write every shard this pserver holds, and its optimizer state, into
                                     dirname as the checkpoint block says (`<var>.block<i>`, Paddle's
                                     tensor format), so no table ever passes through one process

Both hold the service lock: a prefetch never sees a half-applied update, and a checkpoint is one step's
state (in sync mode, the state after the last completed step).
"""

import os

from ..lowering.codegen import lower_block
from ..checkpoint_dir import file_record
from ...ir.tensor_format import atomic_write, write_lod_tensor
from .errors import PsError

__all__ = ["TableService"]


class TableService:
    def __init__(self, service):
        self.service = service
        info = service.info.tables
        self.shards = {s["var"]: s for s in info["shards"]}
        self.checkpoint_block = info["checkpoint_block"]
        self.fns = {}

    def _fn(self, var):
        fn = self.fns.get(var)
        if fn is None:
            s = self.shards.get(var)
            if s is None:
                raise PsError("pserver %s holds no shard '%s' of a distributed table (it holds %s)"
                              % (self.service.endpoint, var, ", ".join(sorted(self.shards)) or "none"))
            svc = self.service
            fn = self.fns[var] = lower_block(svc.program, s["prefetch_block"], svc.scope, svc.device,
                                             feed_names=[s["ids"]], fetch_names=[s["out"]], executor=svc.executor)
        return fn

    def prefetch(self, trainer_id, names, ids):
        svc = self.service
        if svc.failure:
            raise PsError(svc.failure)
        fns = [self._fn(n) for n in names]
        out = []
        with svc.lock:
            for fn, t in zip(fns, ids):
                if svc.device != "cpu":
                    t = t.to(svc.device)
                rows = fn([t])[0][0]
                out.append(rows if rows.device.type == "cpu" else rows.cpu())
        return out

    def save(self, dirname, with_state=True):
        """Write this pserver's shards (with_state: and their optimizer state), each fsynced; returns
        {file: manifest record} for the files written."""
        svc = self.service
        if not os.path.isabs(dirname):
            raise PsError("pserver %s: save_tables needs an absolute directory, got %r" % (svc.endpoint, dirname))
        if not os.path.isdir(dirname):
            # a distributed save creates the directory first: a missing one is not the pservers' file system
            raise PsError("pserver %s: cannot write table shards into %s: no such directory here (the "
                          "checkpoint directory must be on a file system the pservers share with trainer 0)"
                          % (svc.endpoint, dirname))
        written = {}
        with svc.lock:
            for op in svc.program.block(self.checkpoint_block).ops:
                var = op.input("X")[0]
                if not with_state and var not in self.shards:
                    continue
                h = svc.scope.find_var(var)
                if h is None or h.value is None:
                    raise PsError("pserver %s holds no value for '%s' (did it run its startup program?)"
                                  % (svc.endpoint, var))
                arr = h.value.detach().cpu().numpy()
                path = os.path.join(dirname, op.attrs["file_path"])
                atomic_write(path, lambda f, a=arr: write_lod_tensor(f, a, None))
                written[os.path.basename(path)] = file_record(path, arr.shape, arr.dtype, svc.endpoint)
        return written


def install(service):
    """A pserver holding table shards answers prefetch and save_tables (service.EXTENSIONS)."""
    if service.info.tables.get("shards"):
        ts = TableService(service)
        service.register_handler("prefetch", ts.prefetch)
        service.register_handler("save_tables", ts.save)

