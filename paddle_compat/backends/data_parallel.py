"""Data-parallel execution of a CompiledProgram: several trainers (processes) and/or several places per process.

- One place per trainer (the nccl2 layout: one process per GPU, or per CPU worker): the program runs as is;
  its gradient call is swapped for GradAllReducer, which averages parameter gradients across trainers with
  bucketed allreduces that overlap the backward pass.
- Several places in one process (CPU_NUM, or several GPUs): the feed is split across places (Paddle's rule,
  feed_split.py), each place runs forward+backward on its own copy of the persistables, gradients are summed
  across places (and allreduced across trainers), scaled, and every place applies the same update
  (step_split.py). Fetched values are concatenated along dim 0, one slice per place.
- At the first run, trainer 0's persistables are broadcast to every trainer; a program compiled with
  share_vars_from uses the other program's places and copies instead.

The trainers' group is the value of the scope's `NCCLID` variable, set by the startup program's gen_nccl_id
(nccl2 transpile), or formed here from BuildStrategy.trainers_endpoints when there is none.
"""

import torch

from . import comm as comm_mod
from .feed_split import split_feed
from .grad_reducer import GradAllReducer
from .step_split import split_step
from .selected_rows import make_rows, rows_values, scale_rows
from ..ir import OP_ROLE_KEY, EOFException, LoDTensor, OpRole, ScopeVar, as_fetch, global_scope
from .feeds import fetch_names_of

__all__ = ["DataParallelRunner"]

NCCL_ID_VAR = "NCCLID"


class DataParallelRunner:
    def __init__(self, compiled, exe):
        bs = compiled._build_strategy
        self._compiled = compiled
        self._program = compiled._runnable_program()
        self._places = compiled._resolve_places(exe.place)
        self._exes = [type(exe)(p) for p in self._places]
        self._num_trainers = int(bs.num_trainers or 1)
        self._trainer_id = int(bs.trainer_id or 0)
        self._endpoints = list(bs.trainers_endpoints or [])
        if not 0 <= self._trainer_id < self._num_trainers:
            raise ValueError("BuildStrategy.trainer_id %d is out of range for num_trainers %d"
                             % (self._trainer_id, self._num_trainers))
        ndev = len(self._places) * self._num_trainers
        self._divisor = ndev if bs.gradient_scale_strategy == bs.GradientScaleStrategy.CoeffNumDevice else 1
        self._comm = None
        self._scopes = {}          # id(user scope) -> [scope per place]
        self._split = None         # (program version, StepSplit)
        self._partial = None       # (program version, whether fewer samples than places may be fed)
        self._autograd_for = self._make_reducer
        self._lowering_fetch = ()

    # ---- set-up --------------------------------------------------------------------------------------
    def _communicator(self, scope):
        if self._num_trainers == 1:
            return None
        if self._comm is not None:
            return self._comm
        holder = scope.find_var(NCCL_ID_VAR)
        c = holder.value if holder is not None else None
        if not isinstance(c, comm_mod.Communicator):
            if not self._endpoints:
                raise RuntimeError(
                    "data-parallel run with num_trainers=%d but the scope has no NCCLID: run the startup program "
                    "transpiled in nccl2 mode (DistributeTranspilerConfig.mode='nccl2') first, or set "
                    "BuildStrategy.trainers_endpoints" % self._num_trainers)
            if len(self._endpoints) != self._num_trainers:
                raise ValueError("BuildStrategy.trainers_endpoints lists %d endpoints but num_trainers is %d"
                                 % (len(self._endpoints), self._num_trainers))
            c = comm_mod.connect(self._endpoints, self._trainer_id, self._exes[0].device, tag="nccl2")
        if c.nranks != self._num_trainers or c.rank != self._trainer_id:
            raise ValueError("num_trainers=%d, trainer_id=%d disagree with the nccl2 transpile (%d trainers, this "
                             "is trainer %d): pass the same values to ParallelExecutor / BuildStrategy"
                             % (self._num_trainers, self._trainer_id, c.nranks, c.rank))
        self._comm = c
        return c

    def _persistables(self, scope):
        """(name, holder) of every initialised dense persistable the program uses, in name order."""
        out = []
        for v in sorted(self._program.global_block().vars.values(), key=lambda v: v.name):
            if not v.persistable:
                continue
            h = scope.find_var(v.name)
            if h is not None and isinstance(h.value, torch.Tensor) and not h.value.is_sparse:
                out.append((v.name, h))
        return out

    def _place_scopes(self, scope):
        scopes = self._scopes.get(scope._uid)
        if scopes is not None:
            return scopes
        shared = self._compiled._share_vars_from
        if shared is not None:
            # Use the other program's places (its runner's scopes), set up by whichever runs first.
            if shared._runner is None:
                shared._runner = DataParallelRunner(shared, self._exes[0])
            scopes = shared._runner._place_scopes(scope)
            if len(scopes) != len(self._places):
                raise ValueError("share_vars_from: that program runs on %d places, this one on %d"
                                 % (len(scopes), len(self._places)))
            if self._num_trainers > 1:
                self._comm = shared._runner._comm
        else:
            c = self._communicator(scope)
            persist = self._persistables(scope)
            if c is not None:
                with torch.no_grad():
                    c.broadcast_([h.value for _, h in persist], root=0)
            scopes = [scope]
            for p in range(1, len(self._places)):
                s = scope.new_scope()
                dev = self._exes[p].device
                for name, h in persist:
                    local = s.var(name)
                    local.value = h.value.detach().to(dev, copy=True)
                    local.lod = h.lod
                scopes.append(s)
        self._communicator(scope)
        self._scopes[scope._uid] = scopes
        return scopes

    def _make_reducer(self, block, region):
        # Gradients are views of reused buffers unless one of them is fetched (the caller keeps it).
        fetched = set(self._lowering_fetch).intersection(region.wanted)
        return GradAllReducer(self._comm, block, region, self._divisor, reuse_buffers=not fetched)

    def _step_split(self):
        if self._split is None or self._split[0] != self._program._version:
            self._split = (self._program._version, split_step(self._program))
        return self._split[1]

    def _reads_keep_last(self):
        reads = [op for op in self._program.global_block().ops if op.type == "read"]
        return bool(reads) and not any(op.attrs.get("drop_last", True) for op in reads)

    def _partial_feed_ok(self):
        """Paddle 1.8's partial feed: a program with no backward or optimizer op (inference) may be fed fewer
        samples than places; it then runs on the first ones only. Cached per program version."""
        if self._partial is None or self._partial[0] != self._program._version:
            training = OpRole.Backward | OpRole.Optimize
            ok = self._num_trainers == 1 and not any(
                int(op.attrs.get(OP_ROLE_KEY, 0)) & training for b in self._program.blocks for op in b.ops)
            self._partial = (self._program._version, ok)
        return self._partial[1]

    # ---- running -------------------------------------------------------------------------------------
    def run(self, feed, fetch_list, scope, return_numpy, return_merged):
        scope = scope if scope is not None else global_scope()
        fetch = fetch_names_of(fetch_list)
        scopes = self._place_scopes(scope)
        if len(self._places) == 1:
            if isinstance(feed, (list, tuple)):
                if len(feed) != 1:
                    raise ValueError("feed is a list of %d dicts but this program runs on 1 place" % len(feed))
                feed = feed[0]
            self._lowering_fetch = fetch
            outs = self._exes[0]._run_program(self._program, feed, fetch, scope, return_numpy,
                                              autograd_for=self._autograd_for if self._comm else None)
            return outs if return_merged else [[o] for o in outs]
        feeds = split_feed(feed, len(self._places), self._program.global_block(), self._partial_feed_ok())
        per_place = self._run_places(feeds, fetch, scopes)
        return _merge(fetch, per_place, return_numpy, return_merged)

    def _run_places(self, feeds, fetch, scopes):
        sp = self._step_split()
        n = len(feeds)   # fewer than the places: an inference program fed fewer samples (split_feed)
        if sp.apply is None:
            out = []
            for p in range(n):
                try:
                    res = self._exes[p]._run_program(sp.compute, feeds[p], fetch, scopes[p], False)
                except EOFException:
                    # a non-iterable DataLoader (drop_last=False) ran dry after place p-1 read the last batch:
                    # an inference program runs on the places that got one (Paddle's partial feed)
                    if p == 0 or not self._partial_feed_ok() or not self._reads_keep_last():
                        raise
                    break
                out.append([_value(r) for r in res])
            return out
        from_compute = [f for f in fetch if f not in sp.grads and f not in sp.apply_outputs
                        and not _persistable(sp.apply, f)]
        computed = []
        for p in range(n):
            want = [w for w in sp.iface if w not in feeds[p]] + [f for f in from_compute if f not in sp.iface]
            res = self._exes[p]._run_program(sp.compute, feeds[p], want, scopes[p], False)
            computed.append(dict(zip(want, res)))
        avg = self._average([[_value(computed[p][g])[0] for p in range(n)] for g in sp.grads])
        apply_fetch = [f for f in fetch if f not in from_compute and f not in sp.grads]
        results = []
        for p in range(n):
            fd = {}
            for name in sp.iface:
                if name in sp.grads:
                    g = avg[sp.grads.index(name)]
                    # each place gets its own copy (an in-place op must not leak into another place)
                    fd[name] = g.to(self._exes[p].device, copy=p != n - 1)
                elif name in computed[p]:
                    fd[name] = computed[p][name]
                else:
                    fd[name] = feeds[p][name]
            got = dict(zip(apply_fetch, self._exes[p]._run_program(sp.apply, fd, apply_fetch, scopes[p], False)))
            row = []
            for f in fetch:
                if f in sp.grads:
                    row.append((avg[sp.grads.index(f)], None))
                elif f in got:
                    row.append(_value(got[f]))
                else:
                    row.append(_value(computed[p][f]))
            results.append(row)
        return results

    def _average(self, per_grad):
        """Sum each gradient over places (on place 0's device), allreduce over trainers, scale."""
        if not per_grad:
            return []
        dev = per_grad[0][0].device
        sums = []
        for parts in per_grad:
            if self._comm is None and all(t.is_sparse for t in parts):
                # one place's rows after another's: the sum stays row-sparse, so the optimizer still
                # updates only the looked-up rows (as Paddle's sparse gradient merge across places)
                rows = torch.cat([rows_values(t)[0].to(dev) for t in parts])
                vals = torch.cat([rows_values(t)[1].to(dev) for t in parts])
                s = make_rows(rows, vals, parts[0].shape[0])
                sums.append(scale_rows(s, 1.0 / self._divisor) if self._divisor != 1 else s)
                continue
            parts = [t.to_dense() if t.is_sparse else t for t in parts]
            s = parts[0].clone()
            for t in parts[1:]:
                s.add_(t.to(dev))
            sums.append(s)
        if self._comm is not None:
            self._comm.allreduce_(sums)
        if self._divisor != 1:
            for s in sums:
                if not s.is_sparse:   # sparse sums were scaled above
                    s.div_(self._divisor)
        return sums


def _persistable(program, name):
    v = program.global_block()._find_var_recursive(name)
    return v is not None and v.persistable


class _ArrayValue(list):
    """A fetched LoDTensorArray of one place: [(tensor, lod), ...] of its elements."""


def _value(r):
    """(tensor, lod) of one fetched LoDTensor, or (row-sparse torch tensor, None) of a SelectedRows (the
    gradient of embedding(is_sparse=True), which return_numpy=False fetches as SelectedRows), or an
    _ArrayValue of a LoDTensorArray (fetched as a list)."""
    if isinstance(r, list):
        return _ArrayValue(_value(e) if e is not None else (None, None) for e in r)
    holder = getattr(r, "_holder", None)
    if holder is None:
        values = r._value
        rows = torch.as_tensor(r.rows(), dtype=torch.int64, device=values.device)
        return (make_rows(rows, values, r.height()), None)
    return (holder.value, holder.lod)


def _merge(fetch, per_place, return_numpy, return_merged):
    out = []
    for i, name in enumerate(fetch):
        vals = [row[i] for row in per_place]
        if isinstance(vals[0], _ArrayValue):
            out.append(_merge_arrays(name, vals, return_numpy, return_merged))
            continue
        if not return_merged:
            out.append([_finish(name, t, lod, return_numpy, LoDTensor, ScopeVar) for t, lod in vals])
            continue
        ts = [t.reshape(1) if t.dim() == 0 else t for t, _ in vals]
        merged = torch.cat([t.to(ts[0].device) for t in ts])
        lods = [lod for _, lod in vals]
        out.append(_finish(name, merged, _merge_lod(lods) if any(lods) else None, return_numpy, LoDTensor, ScopeVar))
    return out


def _merge_arrays(name, arrays, return_numpy, return_merged):
    """A LoDTensorArray fetched from each place (Paddle 1.8.5): unmerged, one list per place; merged, one list
    whose element j is the places' elements j concatenated."""
    def fin(t, lod):
        return None if t is None else _finish(name, t, lod, return_numpy, LoDTensor, ScopeVar)
    if not return_merged:
        return [[fin(t, lod) for t, lod in arr] for arr in arrays]
    if len({len(a) for a in arrays}) != 1:
        raise ValueError("fetched LoDTensorArray '%s' holds %s elements on the places; merging wants the same "
                         "number (fetch it with return_merged=False)" % (name, [len(a) for a in arrays]))
    merged = []
    for j in range(len(arrays[0])):
        parts = [a[j] for a in arrays]
        if any(t is None for t, _ in parts):
            merged.append(None)
            continue
        ts = [t.reshape(1) if t.dim() == 0 else t for t, _ in parts]
        lods = [lod for _, lod in parts]
        merged.append(fin(torch.cat([t.to(ts[0].device) for t in ts]), _merge_lod(lods) if any(lods) else None))
    return merged


def _finish(name, t, lod, return_numpy, LoDTensor, ScopeVar):
    if return_numpy:
        if lod:
            raise RuntimeError("fetched '%s' holds LoD information; it cannot be returned as a numpy array: set "
                               "return_numpy=False" % name)
        return as_fetch(t.detach().cpu().numpy().copy())
    return LoDTensor(_holder=ScopeVar(value=t.detach(), lod=lod))


def _merge_lod(lods):
    """Concatenate the LoDs of per-place pieces: each level's offsets continue from the previous piece."""
    merged = [list(level) for level in lods[0]]
    for lod in lods[1:]:
        for k, level in enumerate(lod):
            base = merged[k][-1]
            merged[k].extend(base + o for o in level[1:])
    return merged
