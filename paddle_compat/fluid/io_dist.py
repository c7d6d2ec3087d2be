"""Distributed save and load for pserver mode (fluid/io.py calls these for transpiled programs).

Save: `io.save_persistables(exe, dir, trainer_program)`. Every trainer saves its local persistables (what
its program keeps besides the parameters, e.g. batch-norm statistics), as Paddle did; the chief (trainer 0)
also pulls from the pservers, with one RPC per pserver, every parameter block AND the optimizer state
(moments, beta pows, learning rate, LR-schedule counter), and writes each under its original name at its
full shape: the same files a local save_persistables writes, so a local program can load them too.
Paddle saved only the parameters, so a resumed Adam job restarted its moments and bias corrections; with
the state saved, a resumed job continues exactly where the uninterrupted one would be (for SGD the
parameters and the LR counter suffice; for Adam the moments and beta pows are needed as well).

save_params saves only the parameters (from the pservers, on the chief). An inference program pruned from
the trainer program (save_inference_model) saves the trainer's own copies of the parameters, on any trainer,
without contacting the pservers.

Load: `io.load_persistables(exe, dir, pserver_program)` on a pserver, after its startup program and before
running the pserver program: each var it holds gets its rows of the saved original. A missing parameter
file is an error; missing optimizer state (a parameters-only checkpoint, e.g. one saved by Paddle) keeps
the startup values, with a warning that the resume is then not exact.
"""

import os
import warnings

import numpy as np

__all__ = ["distributed_save", "pserver_load"]


def _check_filename(filename, what):
    if filename is not None:
        raise NotImplementedError("%s in pserver mode writes one file per variable (each pserver loads its rows "
                                  "from them); filename=%r is not supported" % (what, filename))


def distributed_save(executor, dirname, main_program, vars, filename=None):
    from .io import save_vars
    _check_filename(filename, "save_persistables")
    os.makedirs(dirname, exist_ok=True)
    if not any(op.type == "send" for op in main_program.global_block().ops):
        # an inference program pruned from the trainer program (save_inference_model): the trainer's own
        # copies of the parameters (those of its last step), on any trainer, without the pservers
        save_vars(executor, dirname, main_program, vars=list(vars))
        return
    info = main_program._dist_info
    remote = info.get("remote_vars", {})
    local = [v for v in vars if v.name not in remote]
    requested = set(v.name for v in vars)
    if not requested >= set(v.name for v in main_program.list_vars() if v.persistable):
        remote = {n: m for n, m in remote.items() if n in requested}   # save_params: no optimizer state
    if local:
        save_vars(executor, dirname, main_program, vars=local)
    if not main_program._is_chief:
        return
    from ..backends.ps.dist_io import pull_vars
    from ..backends.tensor_format import atomic_write, write_lod_tensor
    wanted = {}
    for name, meta in remote.items():
        pieces = meta["pieces"] if meta["kind"] == "rows" else meta["pieces"][:1]
        for ep, block, _, _ in pieces:
            wanted.setdefault(ep, [])
            if block not in wanted[ep]:
                wanted[ep].append(block)
    got = pull_vars(info, wanted)
    for name, meta in remote.items():
        if meta["kind"] == "rows":
            parts = sorted(meta["pieces"], key=lambda p: p[2])
            arr = np.concatenate([got[(ep, block)] for ep, block, _, _ in parts], axis=0)
        else:
            ep, block = meta["pieces"][0][:2]
            arr = got[(ep, block)]
        arr = np.ascontiguousarray(arr.reshape(meta["shape"]) if meta["shape"] else arr)
        atomic_write(os.path.join(dirname, name), lambda f, a=arr: write_lod_tensor(f, a, None))


def pserver_load(executor, dirname, main_program, vars):
    from . import core
    from ..backends.tensor_format import read_lod_tensor
    if not os.path.isdir(dirname):
        raise ValueError("load_persistables: there is no directory %s" % dirname)
    info = main_program._dist_info
    gb = main_program.global_block()
    scope = core.global_scope()
    missing_params, missing_state = [], []
    for name, (orig, off, rows, kind, what) in info["local_vars"].items():
        path = os.path.join(dirname, orig)
        if not os.path.exists(path):
            (missing_params if what == "param" else missing_state).append(orig)
            continue
        with open(path, "rb") as f:
            arr, _ = read_lod_tensor(f, path)
        want = [int(d) for d in gb.var(name).shape]
        if kind == "rows":
            if arr.ndim != len(want) or arr.shape[0] < off + rows or list(arr.shape[1:]) != want[1:]:
                raise ValueError("load_persistables: %s holds %s of shape %s, but pserver %s needs its rows "
                                 "[%d, %d) at width %s" % (path, orig, list(arr.shape), info["endpoint"], off,
                                                           off + rows, want[1:]))
            arr = arr[off:off + rows]
        if list(arr.shape) != want:
            raise ValueError("load_persistables: %s holds shape %s, pserver %s's %s has shape %s"
                             % (path, list(arr.shape), info["endpoint"], name, want))
        scope.var(name).value = core.to_torch(np.ascontiguousarray(arr), executor.device)
    if missing_params:
        raise ValueError("load_persistables: %s has no file for parameter(s) %s that pserver %s holds"
                         % (dirname, ", ".join(sorted(set(missing_params))), info["endpoint"]))
    if missing_state:
        warnings.warn("load_persistables: %s has no optimizer state for %s; pserver %s keeps their startup "
                      "values, so the resumed training is not exactly the uninterrupted one"
                      % (dirname, ", ".join(sorted(set(missing_state))[:8]), info["endpoint"]))
