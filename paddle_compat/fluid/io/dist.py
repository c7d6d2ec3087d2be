"""Distributed save and load for pserver mode (fluid/io/save_load.py calls these for transpiled programs).

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

Distributed lookup tables are never pulled to a trainer: the chief asks every pserver holding a shard (one
`save_tables` RPC each, all at once) to write its shards itself into the same directory, in Paddle's tensor
format: `<table>.block<i>` holds shard i, the rows [i * ceil(H/n), ...) of the table (n = the pservers),
and `<state>.block<i>` its optimizer state (e.g. Adagrad's moment). Concatenating block0, block1, ... in
order gives the whole table. The directory must be one the pservers can write (the same path on a shared
file system, or the pservers' own machines).

Load: `io.load_persistables(exe, dir, pserver_program)` on a pserver, after its startup program and before
running the pserver program: each var it holds gets its rows of the saved original. A missing parameter
file is an error; missing optimizer state (a parameters-only checkpoint, e.g. one saved by Paddle) keeps
the startup values, with a warning that the resume is then not exact. A table shard loads from its own
`<table>.block<i>` when the checkpoint was written by as many pservers; otherwise its rows are cut from
the shards there (any number of them) or from a whole `<table>` file (saved by a local program). A local
program loading a directory with shards but no `<table>` file concatenates the shards
(`load_table_shards`).
"""

import os
import warnings

import numpy as np

from ...backends.ps import dist_io
from ...backends.ps.records import pserver_plan, trainer_plan
from ...backends.checkpoint_dir import Staging, check_sha256, file_record, test_pause, verify
from ...ir.tensor_format import atomic_write, read_lod_header, read_lod_tensor, write_lod_tensor
from ...ir import global_scope, to_torch
from .variables import save_selected

__all__ = ["distributed_save", "pserver_load", "load_table_shards"]


def _check_filename(filename, what):
    if filename is not None:
        raise NotImplementedError("%s in pserver mode writes one file per variable (each pserver loads its rows "
                                  "from them); filename=%r is not supported" % (what, filename))


def distributed_save(executor, dirname, main_program, vars, filename=None):
    _check_filename(filename, "save_persistables")
    if not any(op.type == "send" for op in main_program.global_block().ops):
        # an inference program pruned from the trainer program (save_inference_model): the trainer's own
        # copies of the parameters (those of its last step), on any trainer, without the pservers
        os.makedirs(dirname, exist_ok=True)
        save_selected(executor, dirname, list(vars))
        return
    if not main_program._is_chief:
        # The chief's checkpoint is the job's. Paddle had every trainer also write its local persistables
        # into dirname; on a shared file system they would land in the directory the chief is switching.
        return
    info = trainer_plan(main_program)
    if info is None:
        raise ValueError("save_persistables: program has send ops but no TrainerPlan (not a transpiled "
                         "trainer program)")
    remote = info.remote_vars
    local = [v for v in vars if v.name not in remote]
    requested = set(v.name for v in vars)
    with_state = requested >= set(v.name for v in main_program.list_vars() if v.persistable)
    if not with_state:
        remote = {n: m for n, m in remote.items() if n in requested}   # save_params: no optimizer state
    tables = info.tables
    describe = _pserver_names(info)
    parts = {v.name: "trainer 0" for v in local}
    for name, meta in remote.items():
        eps = sorted(set(p[0] for p in (meta["pieces"] if meta["kind"] == "rows" else meta["pieces"][:1])))
        parts[name] = "trainer 0, pulled from %s" % ", ".join(describe(ep) for ep in eps)
    for t in tables.values():
        for ep, shard, _, _ in t["shards"]:
            parts[shard] = describe(ep)
    staging = Staging(dirname, parts)
    records = {}
    if local:
        save_selected(executor, staging.path, local)
        for v in local:
            path = os.path.join(staging.path, v.name)
            _fsync(path)
            records[v.name] = file_record(path, _header_shape(path), v.dtype, "trainer 0")
    if tables:   # parameters: save_params writes the shards too; save_persistables also their optimizer state
        eps = sorted(set(sh[0] for t in tables.values() for sh in t["shards"]))
        for ep, recs in dist_io.save_tables(executor, info, staging.path, eps, with_state).items():
            for name, rec in recs.items():
                records[name] = dict(rec, **{"from": describe(ep)})
    wanted = {}
    for name, meta in remote.items():
        pieces = meta["pieces"] if meta["kind"] == "rows" else meta["pieces"][:1]
        for ep, block, _, _ in pieces:
            wanted.setdefault(ep, [])
            if block not in wanted[ep]:
                wanted[ep].append(block)
    got = dist_io.pull_vars(executor, info, wanted)
    for i, (name, meta) in enumerate(remote.items()):
        if meta["kind"] == "rows":
            parts_ = sorted(meta["pieces"], key=lambda p: p[2])
            arr = np.concatenate([got[(ep, block)] for ep, block, _, _ in parts_], axis=0)
        else:
            ep, block = meta["pieces"][0][:2]
            arr = got[(ep, block)]
        arr = np.ascontiguousarray(arr.reshape(meta["shape"]) if meta["shape"] else arr)
        path = os.path.join(staging.path, name)
        atomic_write(path, lambda f, a=arr: write_lod_tensor(f, a, None))
        records[name] = file_record(path, arr.shape, arr.dtype, parts[name])
        if i == 0:
            test_pause("trainer-save-part")
    staging.commit(records)


def _pserver_names(info):
    eps = list(info.pserver_endpoints)

    def describe(ep):
        return "pserver %d (%s)" % (eps.index(ep), ep) if ep in eps else "pserver %s" % ep
    return describe


def _fsync(path):
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def _header_shape(path):
    try:
        return read_lod_header(path) or []
    except Exception:   # not a plain LoDTensor file (e.g. SelectedRows): recorded without a shape
        return []


def pserver_load(executor, dirname, main_program, vars):
    manifest = verify(dirname)     # refuses an interrupted save, naming its missing parts
    if not os.path.isdir(dirname):
        raise ValueError("load_persistables: there is no directory %s" % dirname)
    info = pserver_plan(main_program)
    gb = main_program.global_block()
    scope = global_scope()
    missing_params, missing_state = [], []
    for name, (orig, off, rows, kind, what) in info.local_vars.items():
        want = [int(d) for d in gb.var(name).shape]
        if what in ("table", "table_state"):
            arr = _table_rows(dirname, name, orig, off, rows, kind, want, manifest)
            if arr is None:
                (missing_params if what == "table" else missing_state).append(orig)
            else:
                scope.var(name).value = to_torch(arr, executor.device)
            continue
        path = os.path.join(dirname, orig)
        if not os.path.exists(path):
            (missing_params if what == "param" else missing_state).append(orig)
            continue
        check_sha256(manifest, dirname, orig)
        with open(path, "rb") as f:
            arr, _ = read_lod_tensor(f, path)
        if kind == "rows":
            if arr.ndim != len(want) or arr.shape[0] < off + rows or list(arr.shape[1:]) != want[1:]:
                raise ValueError("load_persistables: %s holds %s of shape %s, but pserver %s needs its rows "
                                 "[%d, %d) at width %s" % (path, orig, list(arr.shape), info.endpoint, off,
                                                           off + rows, want[1:]))
            arr = arr[off:off + rows]
        if list(arr.shape) != want:
            raise ValueError("load_persistables: %s holds shape %s, pserver %s's %s has shape %s"
                             % (path, list(arr.shape), info.endpoint, name, want))
        scope.var(name).value = to_torch(np.ascontiguousarray(arr), executor.device)
    if missing_params:
        raise ValueError("load_persistables: %s has no file for parameter(s) %s that pserver %s holds"
                         % (dirname, ", ".join(sorted(set(missing_params))), info.endpoint))
    if missing_state:
        warnings.warn("load_persistables: %s has no optimizer state for %s; pserver %s keeps their startup "
                      "values, so the resumed training is not exactly the uninterrupted one"
                      % (dirname, ", ".join(sorted(set(missing_state))[:8]), info.endpoint))


def _read(path, manifest=None):
    if manifest is not None:
        check_sha256(manifest, os.path.dirname(path), os.path.basename(path))
    with open(path, "rb") as f:
        return read_lod_tensor(f, path)[0]


def _shard_files(dirname, orig):
    """[(path, row offset, rows)] of the shards `<orig>.block0, .block1, ...` saved by pservers, in order."""
    out, i, off = [], 0, 0
    while True:
        path = os.path.join(dirname, "%s.block%d" % (orig, i))
        if not os.path.exists(path):
            return out
        shape = read_lod_header(path)
        out.append((path, off, shape[0] if shape else 1))
        off += out[-1][2]
        i += 1


def _table_rows(dirname, name, orig, off, rows, kind, want, manifest=None):
    """Rows [off, off + rows) of a table (or of its row-shaped state) for the pserver var `name`, or None."""
    own = os.path.join(dirname, name)
    if kind != "rows":   # replica state (e.g. a beta pow): this shard's copy, else shard 0's, else whole
        for path in (own, os.path.join(dirname, orig + ".block0"), os.path.join(dirname, orig)):
            if os.path.exists(path):
                return _check(_read(path, manifest), want, path, name)
        return None
    shards = _shard_files(dirname, orig)
    # the checkpoint of as many pservers (the usual resume): this shard's own file, as is
    mine = [s for s in shards if s[0] == own and s[1] == off and s[2] == rows]
    if mine:
        return _check(_read(own, manifest), want, own, name)
    if shards:
        parts = []
        for path, a, n in shards:
            lo, hi = max(off, a), min(off + rows, a + n)
            if lo < hi:
                parts.append(_read(path, manifest)[lo - a:hi - a])
        arr = np.concatenate(parts, axis=0) if parts else None
        if arr is None or arr.shape[0] != rows:
            raise ValueError("load_persistables: the shards %s.block* in %s cover %d rows; %s needs rows [%d, %d)"
                             % (orig, dirname, shards[-1][1] + shards[-1][2], name, off, off + rows))
        return _check(arr, want, dirname, name)
    whole = os.path.join(dirname, orig)
    if os.path.exists(whole):
        arr = _read(whole, manifest)
        if arr.shape[0] < off + rows:
            raise ValueError("load_persistables: %s holds %d rows of %s; %s needs rows [%d, %d)"
                             % (whole, arr.shape[0], orig, name, off, off + rows))
        return _check(arr[off:off + rows], want, whole, name)
    return None


def _check(arr, want, path, name):
    if list(arr.shape) != list(want):
        raise ValueError("load_persistables: %s holds shape %s, but %s has shape %s"
                         % (path, list(arr.shape), name, want))
    return np.ascontiguousarray(arr)


def load_table_shards(executor, dirname, vars):
    """A local program loading a checkpoint whose tables were saved by pservers: each var with no file of
    its own but shards `<var>.block<i>` gets their concatenation. Returns the vars loaded."""
    manifest = verify(dirname)
    done = []
    for v in vars:
        shards = _shard_files(dirname, v.name)
        if not shards:
            continue
        arr = np.concatenate([_read(p, manifest) for p, _, _ in shards], axis=0)
        want = [int(d) for d in v.shape]
        if want and list(arr.shape) != want:
            raise ValueError("load_vars: the shards %s.block0..%d in %s make a table of shape %s; the program's %s "
                             "has shape %s" % (v.name, len(shards) - 1, dirname, list(arr.shape), v.name, want))
        global_scope().var(v.name).value = to_torch(np.ascontiguousarray(arr), executor.device)
        done.append(v)
    return done
