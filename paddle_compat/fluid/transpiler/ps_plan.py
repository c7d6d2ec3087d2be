"""The pserver-mode plan: which ops optimize which parameter, how each parameter is cut into blocks and
where every block lives. Pure data computed once from a snapshot of the user's program; the trainer,
pserver and startup passes only read it.

Dispatch follows Paddle: parameters sorted by name, their gradient blocks in that order (with
slice_var_up=False Paddle shuffled this list with np.random.seed(program.random_seed); we shuffle with a
private RandomState of the same seed: the same order, without reseeding the user's global numpy RNG),
then the dispatcher places each block. A distributed lookup table (embedding is_distributed=True) is not
dispatched: it is cut by ps_slicing.table_rows, shard i on pserver i (Paddle also left the table out of
the dispatch). Paddle placed a gradient with the dispatcher run over gradient
names and its parameter with a second run over parameter names; with HashName (whose gradient names carry
a `.trainer_N` suffix) the two could disagree, so a gradient was sent where its parameter did not live.
Here one run over the parameter block names places both.
"""

import collections
import hashlib

import numpy as np

from ...ir import OP_NAMESCOPE_KEY, OP_ROLE_KEY, OP_ROLE_VAR_KEY, OpRole, dtype_name, is_autograd_op
from ...ops import info as op_info
from .details.vars_distributed import VarsDistributed, VarStruct
from .ps_slicing import VarBlock, block_rows, table_rows

__all__ = ["PsPlan", "build_plan", "is_optimizer_op"]


CLIP_SCOPE_MARK = "@CLIP"


def is_optimizer_op(op):
    """An update op (sgd, adam, ...): it reads Param and writes ParamOut."""
    return "Param" in op.inputs and "ParamOut" in op.outputs


def _role(op):
    return int(op.attrs.get(OP_ROLE_KEY, 0))


def _is_lr_op(op):
    return bool(_role(op) & OpRole.LRSched)


def _is_opt_op(op):
    r = _role(op)
    return bool(r & OpRole.Optimize) and not r & OpRole.LRSched


class ParamChain:
    """The optimize-role ops of one parameter (clip, regularization, the optimizer op, ...), and the
    persistable state they keep per parameter."""

    def __init__(self, param, grad):
        self.param, self.grad = param, grad
        self.ops = []               # op indices in the main program's block 0, in program order
        self.state = collections.OrderedDict()   # var name -> "rows" (param-shaped) or "replica"
        self.temps = set()          # non-persistable vars produced inside the chain
        self.blocks = []            # VarBlock, in row order
        self.table = None           # TableInfo when the parameter is a distributed lookup table


class TableInfo:
    """A distributed lookup table: the lookups that read it and the grad ops that compute its gradient
    (op indices in the user's block 0), which the trainer pass replaces by the prefetch chain."""

    def __init__(self, name, height, width, padding_idx):
        self.name, self.height, self.width, self.padding_idx = name, int(height), int(width), int(padding_idx)
        self.lookups = []           # forward lookup_table ops, in program order
        self.grad_ops = []          # autograd ops writing <table>@GRAD (or its @RENAME@ parts)
        self.ids, self.outs = [], []
        self.keep_ids_shape = []    # per lookup: lookup_table_v2 (fluid.embedding) keeps the ids' trailing 1

    def ids_block(self, b):
        """Trainer var of the unique ids shard `b` serves this step (split_ids output, prefetch input)."""
        return "%s.prefetch_in.block%d" % (self.name, b.index)

    def rows_block(self, b):
        """Trainer var of the rows shard `b` sent back (prefetch output, merge_ids input)."""
        return "%s.prefetch_out.block%d" % (self.name, b.index)


class PsPlan:
    def __init__(self, cfg, trainer_id, endpoints, trainers, sync_mode):
        self.trainer_id = trainer_id
        self.endpoints = list(endpoints)
        self.trainers = trainers
        self.sync_mode = sync_mode
        self.geo = bool(getattr(cfg, "geo_sgd_mode", False))
        self.slice_var_up = bool(cfg.slice_var_up)
        self.min_block_size = cfg.min_block_size
        self.split_method = cfg.split_method
        self.dc_asgd = bool(cfg.enable_dc_asgd)
        self.runtime_split = bool(cfg.runtime_split_send_recv)
        self.half_async = bool(getattr(cfg, "half_async", False))
        self.geo = bool(getattr(cfg, "geo_sgd_mode", False))
        self.chains = collections.OrderedDict()   # param name -> ParamChain, sorted by name
        self.tables = collections.OrderedDict()   # table name -> TableInfo (distributed lookup tables)
        self.lr_ops = []            # op indices of LR-schedule ops
        self.lr_outputs = set()     # vars the LR ops produce that the chains read
        self.step_counters = {}     # async: LR `increment` op index -> (counter, per-trainer counters, step)
        self.global_vars = []       # persistable/LR vars shared by all chains (learning rate, counters)
        self.removed_ops = set()    # op indices that leave the trainer program
        self.dispatch = []          # VarBlock in dispatch order
        self.var_meta = {}          # name -> (shape, dtype name) of every var the pservers hold
        self.digest = ""
        self.overview = None        # details.VarsDistributed (Program._parameters_on_pservers)

    @property
    def half_async_trainer(self):
        """Paddle 1.8's condition for the half-async send_barrier (and its HalfAsyncCommunicator): not sync,
        split at run time, half_async set, not Geo-SGD."""
        return self.half_async and self.runtime_split and not self.sync_mode and not self.geo

    @property
    def suffixed(self):
        """Gradients carry a `.trainer_N` suffix: sync mode with more than one trainer."""
        return self.sync_mode and self.trainers > 1

    def blocks_on(self, endpoint):
        return [b for b in self.dispatch if b.endpoint == endpoint]

    def ordered_blocks_on(self, endpoint):
        """This endpoint's blocks in optimize-block order: parameters by name, then row order."""
        return [b for c in self.chains.values() for b in c.blocks if b.endpoint == endpoint]

    def remote_vars(self):
        """{original var name: {shape, dtype, kind, pieces: [[endpoint, block var, row offset, rows]]}}:
        what the pservers hold of each parameter, optimizer state and global var (for distributed save)."""
        out = collections.OrderedDict()
        for chain in self.chains.values():
            if chain.table is not None:
                continue    # each pserver saves its own shard (tables_info)
            shape, dt = self.var_meta[chain.param]
            out[chain.param] = {"shape": shape, "dtype": dt, "kind": "rows",
                                "pieces": [[b.endpoint, b.name, b.offset, b.rows] for b in chain.blocks]}
            for var, kind in chain.state.items():
                shape, dt = self.var_meta[var]
                out[var] = {"shape": shape, "dtype": dt, "kind": kind,
                            "pieces": [[b.endpoint, b.state_name(var), b.offset, b.rows] for b in chain.blocks]}
        for var in self.global_vars:
            if var in self.lr_outputs:
                continue    # recomputed by the LR block every step: nothing to save
            shape, dt = self.var_meta[var]
            out[var] = {"shape": shape, "dtype": dt, "kind": "replica",
                        "pieces": [[ep, var, 0, shape[0] if shape else 1] for ep in self.endpoints]}
        return out

    def tables_info(self):
        """{table: {height, width, shards: [[endpoint, shard var, row offset, rows]], state: [vars]}}:
        where the shards live (the chief asks those pservers to save them)."""
        out = collections.OrderedDict()
        for name, t in self.tables.items():
            chain = self.chains[name]
            out[name] = {"height": t.height, "width": t.width,
                         "shards": [[b.endpoint, b.name, b.offset, b.rows] for b in chain.blocks],
                         "state": list(chain.state)}
        return out


def _var(block, name):
    v = block._find_var_recursive(name)
    if v is None:
        raise ValueError("transpile: variable '%s' is used by an optimize op but not declared" % name)
    return v


def _collect_chains(plan, block):
    """params_grads from the optimize ops' op_role_var, as Paddle's _get_optimize_pass did."""
    pairs = collections.OrderedDict()
    for i, op in enumerate(block.ops):
        if _is_lr_op(op):
            plan.lr_ops.append(i)
            plan.removed_ops.add(i)
            continue
        if not _is_opt_op(op):
            continue
        if CLIP_SCOPE_MARK in (op.attrs.get(OP_NAMESCOPE_KEY) or ""):
            # Paddle 1.8: set_gradient_clip's ops (an @CLIP name scope) stay on the trainer, as backward ops:
            # each trainer clips its own gradients (GradientClipByGlobalNorm by the norm of all of them) and
            # sends the clipped ones (the optimizer ops' Grad)
            op._set_attr(OP_ROLE_KEY, OpRole.Backward)
            continue
        plan.removed_ops.add(i)
        role_var = op.attrs.get(OP_ROLE_VAR_KEY) or []
        if len(role_var) < 2:
            raise NotImplementedError(
                "transpile: optimize op '%s' (outputs %s) belongs to no parameter (no op_role_var); pserver mode "
                "cannot place it" % (op.type, op.output_arg_names[:3]))
        p, g = role_var[0], role_var[1]
        if p not in pairs:
            pairs[p] = ParamChain(p, g)
        pairs[p].ops.append(i)
    bp_updated = _bp_updated_params(plan, block)
    for p in bp_updated:
        if p not in pairs:
            pairs[p] = ParamChain(p, p)
    if not pairs:
        raise ValueError("transpile: the program has no optimize ops; call optimizer.minimize(loss) before "
                         "DistributeTranspiler.transpile in pserver mode")
    for name in sorted(pairs):
        chain = pairs[name]
        if name not in bp_updated and not any(is_optimizer_op(block.ops[i]) for i in chain.ops):
            raise ValueError("transpile: parameter '%s' has clip/regularization ops but no optimizer op" % name)
        plan.chains[name] = chain


def _bp_updated_params(plan, block):
    """Parameters an op names in its `distribute_update_vars` attr (search_pyramid_hash's table): updated by
    the op's backward rather than an optimizer op. As in Paddle they are exchanged like the parameters of the
    optimize ops (a chain with no ops); only Geo-SGD, which exchanges parameter deltas, gives that meaning."""
    names = []
    for op in block.ops:
        for n in (op.attrs.get("distribute_update_vars") or "").split(","):
            n = n.strip()
            if not n or n in names:
                continue
            if block._find_var_recursive(n) is None:
                raise ValueError("transpile: op '%s' names '%s' in distribute_update_vars, which the program does "
                                 "not declare" % (op.type, n))
            if not plan.geo:
                raise NotImplementedError(
                    "transpile: op '%s' asks for '%s' (distribute_update_vars) to be updated in distributed "
                    "training; only Geo-SGD (config.geo_sgd_mode) supports that (no optimizer op updates it)"
                    % (op.type, n))
            names.append(n)
    return names


def _classify_vars(plan, block):
    """Split what the chains touch into per-parameter state, chain temporaries and global vars."""
    lr_produced = set()
    lr_touched = set()
    for i in plan.lr_ops:
        lr_produced.update(block.ops[i].output_arg_names)
        lr_touched.update(block.ops[i].input_arg_names + block.ops[i].output_arg_names)
    users = collections.defaultdict(set)
    lr_inputs = set()
    for chain in plan.chains.values():
        for i in chain.ops:
            op = block.ops[i]
            for n in op.input_arg_names + op.output_arg_names:
                users[n].add(chain.param)
            if is_optimizer_op(op):
                lr_inputs.update(op.input("LearningRate"))
    global_vars = []
    for chain in plan.chains.values():
        produced = set()
        for i in chain.ops:
            op = block.ops[i]
            for n in op.input_arg_names:
                if n in (chain.param, chain.grad) or n in produced:
                    continue
                v = _var(block, n)
                if n in lr_produced or n in lr_inputs or len(users[n]) > 1:
                    if plan.geo and not v.persistable and n not in lr_produced:
                        # Geo-SGD trainers keep their whole optimizer (the pservers only add deltas), so a
                        # value computed across parameters (GradientClipByGlobalNorm's norm) stays there
                        continue
                    if not v.persistable and n not in lr_produced:
                        # (optimizer(grad_clip=GradientClipByGlobalNorm): Paddle 1.8.5 moves those ops to the
                        # pservers too and its get_pserver_program dies with a MemoryError)
                        raise NotImplementedError(
                            "transpile: op '%s' optimizing '%s' reads '%s', which is computed for other "
                            "parameters too (the optimizer's grad_clip=GradientClipByGlobalNorm?); pserver mode "
                            "keeps each parameter's update on its own pserver and cannot compute it: clip with "
                            "fluid.clip.set_gradient_clip, whose ops stay on the trainers"
                            % (op.type, chain.param, n))
                    if n not in global_vars:
                        global_vars.append(n)
                elif v.persistable:
                    chain.state.setdefault(n, None)
                else:
                    raise NotImplementedError(
                        "transpile: op '%s' optimizing '%s' reads '%s', which no optimize op of that parameter "
                        "computes; pserver mode cannot move it to a pserver" % (op.type, chain.param, n))
            for n in op.output_arg_names:
                if n in (chain.param, chain.grad) or n in chain.state or n in global_vars:
                    continue
                v = _var(block, n)
                if v.persistable:
                    chain.state.setdefault(n, None)
                else:
                    chain.temps.add(n)
                produced.add(n)
        pshape = tuple(_var(block, chain.param).shape)
        for n in chain.state:
            chain.state[n] = "rows" if tuple(_var(block, n).shape) == pshape else "replica"
    # LR-schedule vars that live on the pservers: persistable ones (counter) and outputs the chains read
    for n in sorted(lr_touched):
        v = _var(block, n)
        if v.persistable and n not in global_vars:
            global_vars.append(n)
    plan.lr_outputs = set(n for n in global_vars if n in lr_produced and not _var(block, n).persistable)
    plan.global_vars = global_vars


def _split_step_counters(plan, block):
    """Async mode (not Geo-SGD), as Paddle 1.8: an LR-schedule step counter (`increment` op) becomes the
    sum of per-trainer counters `<counter>.trainer_N`; each trainer sends its own every step (its value is
    the step, added to the pservers' copy) and the pservers' LR block sums them. Declared in the snapshot
    (the transpiler's own copy of the program) like the other vars the passes read."""
    if plan.sync_mode or plan.geo:
        return
    for i in plan.lr_ops:
        op = block.ops[i]
        if op.type != "increment":
            continue
        counter = op.output("Out")[0]
        if op.input("X") != [counter]:
            continue
        cv = _var(block, counter)
        names = ["%s.trainer_%d" % (counter, t) for t in range(plan.trainers)]
        for n in names:
            if not block.has_var(n):
                block.create_var(name=n, shape=cv.shape, dtype=cv.dtype, persistable=True)
            if n not in plan.global_vars:
                plan.global_vars.append(n)
        plan.step_counters[i] = (counter, names, float(op.attrs.get("step", 1.0)))


def _remote_prefetch_tables(plan, block):
    """Async mode: tables whose every use is an is_sparse lookup_table. Paddle 1.8 gives these lookups
    remote_prefetch (the trainer fetches the step's rows from the pservers and never holds the table);
    treating them as distributed tables does the same, instead of pulling the whole table every step.
    Not in Geo-SGD, where each trainer trains its own copy of every parameter."""
    if plan.sync_mode or plan.geo:
        return []
    uses = {}
    for op in block.ops:
        if op_info(op.type).lookup and op.attrs.get("is_sparse") and not op.attrs.get("is_distributed"):
            uses.setdefault(op.input("W")[0], True)
    for op in block.ops:
        if is_autograd_op(op) or is_optimizer_op(op):
            continue
        for n in op.input_arg_names + op.output_arg_names:
            if n in uses and not (op_info(op.type).lookup and op.attrs.get("is_sparse")):
                uses[n] = False
    # the prefetch runs before the table's first lookup: every id input must exist by then (else the
    # table stays a plain parameter, as in sync mode)
    first, produced = {}, {}
    for i, op in enumerate(block.ops):
        if op_info(op.type).lookup and uses.get(op.input("W")[0]):
            name = op.input("W")[0]
            first.setdefault(name, i)
            if produced.get(op.input("Ids")[0], -1) > first[name]:
                uses[name] = False
        for n in op.output_arg_names:
            produced[n] = i
    return [n for n, only in uses.items() if only and n in plan.chains and len(_var(block, n).shape) == 2]


def _find_tables(plan, block):
    """Distributed lookup tables: parameters read by lookup_table ops with is_distributed=True (and, in
    async mode, those only read by is_sparse lookups: _remote_prefetch_tables)."""
    names = []
    for op in block.ops:
        if op_info(op.type).lookup and op.attrs.get("is_distributed") and op.input("W")[0] not in names:
            names.append(op.input("W")[0])
    remote = set(_remote_prefetch_tables(plan, block))
    names += [n for n in sorted(remote) if n not in names]
    for name in names:
        chain = plan.chains.get(name)
        if chain is None:
            raise ValueError("transpile: the distributed lookup table '%s' has no optimizer op; a table that "
                             "lives on the pservers must be trained there (is it trainable?)" % name)
        w = _var(block, name)
        if len(w.shape) != 2:
            raise ValueError("transpile: distributed lookup table '%s' must be 2-D [height, width], got %s"
                             % (name, list(w.shape)))
        grad = chain.grad
        t, pads = TableInfo(name, w.shape[0], w.shape[1], -1), set()
        for i, op in enumerate(block.ops):
            if i in plan.removed_ops:
                continue
            if is_autograd_op(op):
                if any(n == grad or n.startswith(grad + "@RENAME@") for n in op.output_arg_names):
                    t.grad_ops.append(i)
                continue
            if name not in op.input_arg_names and name not in op.output_arg_names:
                continue
            if not op_info(op.type).lookup or not (op.attrs.get("is_distributed") or name in remote):
                raise NotImplementedError(
                    "transpile: '%s' is a distributed lookup table (embedding is_distributed=True), but op '%s' "
                    "also uses it; a table that lives only on the pservers can only be looked up (mark every "
                    "embedding of it is_distributed=True)" % (name, op.type))
            pads.add(int(op.attrs.get("padding_idx", -1)))
            t.lookups.append(i)
            t.ids.append(op.input("Ids")[0])
            t.outs.append(op.output("Out")[0])
            t.keep_ids_shape.append(op.type == "lookup_table_v2")
        if len(pads) > 1:
            raise NotImplementedError("transpile: the lookups of distributed table '%s' use different "
                                      "padding_idx values %s; use one" % (name, sorted(pads)))
        t.padding_idx = pads.pop()
        chain.table = t
        plan.tables[name] = t


def _check_rowwise(plan, block):
    if plan.geo:    # the Geo-SGD trainer runs the optimize ops on whole parameters; pservers only add deltas
        return
    for chain in plan.chains.values():
        if len(chain.blocks) < 2:
            continue
        for i in chain.ops:
            op = block.ops[i]
            if not is_optimizer_op(op) and not op_info(op.type).row_wise:
                raise NotImplementedError(
                    "transpile: parameter '%s' is cut into %d blocks, but its op '%s' (e.g. GradientClipByNorm) "
                    "needs the whole gradient; set config.slice_var_up = False" % (chain.param, len(chain.blocks),
                                                                                  op.type))


def _slice(plan, block):
    count = len(plan.endpoints) if plan.slice_var_up else 1
    for chain in plan.chains.values():
        pv = _var(block, chain.param)
        if chain.table is not None:
            shards = table_rows(pv.shape[0], len(plan.endpoints))
            chain.blocks = [VarBlock(chain.param, chain.grad, i, len(shards), off, n, pv.shape, table=True)
                            for i, (off, n) in enumerate(shards)]
            for b in chain.blocks:
                b.endpoint = plan.endpoints[b.index]
            continue
        rows = block_rows(pv.shape, count, plan.min_block_size)
        chain.blocks = [VarBlock(chain.param, chain.grad, i, len(rows), off, n, pv.shape)
                        for i, (off, n) in enumerate(rows)]


def _dispatch(plan, program):
    items = [chain.blocks for chain in plan.chains.values() if chain.table is None]
    if not plan.slice_var_up:
        np.random.RandomState(program.random_seed).shuffle(items)
    order = [b for blocks in items for b in blocks]
    dispatcher = plan.split_method(plan.endpoints)
    eps = dispatcher.dispatch([_Named(b.name) for b in order])
    for b, ep in zip(order, eps):
        if ep not in plan.endpoints:
            raise ValueError("transpile: %s placed block %s on %r, which is not a pserver endpoint"
                             % (plan.split_method.__name__, b.name, ep))
        b.endpoint = ep
    plan.dispatch = order


class _Named:
    """What a dispatcher sees of a block: its name (Paddle passed Variables)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def _record_meta(plan, block):
    names = set(plan.global_vars)
    for chain in plan.chains.values():
        names.add(chain.param)
        names.add(chain.grad)
        names.update(chain.state)
    for n in names:
        v = _var(block, n)
        plan.var_meta[n] = ([int(d) for d in v.shape], dtype_name(v.dtype))


def _digest(plan):
    h = hashlib.sha1()
    h.update(repr((plan.trainers, plan.sync_mode, plan.endpoints)).encode())
    for b in plan.dispatch + [b for t in plan.tables for b in plan.chains[t].blocks]:
        h.update(repr((b.name, b.endpoint, b.offset, b.rows, b.merged_grad)).encode())
    return h.hexdigest()[:16]


def _overview(plan, block):
    """Paddle's record of the cluster (Program._parameters_on_pservers): a "Param" entry per parameter block
    ("RemotePrefetch" for a distributed table's shard), then per pserver an "Optimizer" entry per optimizer
    state var of its blocks. offset counts elements before the block, as Paddle's."""
    ov = VarsDistributed()

    def struct(v, name=None, shape=None):
        return VarStruct(name or v.name, tuple(shape if shape is not None else v.shape), v.dtype, v.type,
                         v.lod_level, v.persistable)

    def add(v, b, name, shape, vtype, kind="rows"):
        width = int(np.prod(v.shape[1:])) if len(v.shape) > 1 else 1
        sliced = b.split and kind == "rows"
        ov.add_distributed_var(struct(v), struct(v, name, shape), is_slice=sliced,
                               block_id=b.index if sliced else 0, offset=b.offset * width if sliced else 0,
                               vtype=vtype, endpoint=b.endpoint)

    tables = [b for t in plan.tables for b in plan.chains[t].blocks]
    for b in plan.dispatch + tables:
        add(_var(block, b.param), b, b.name, b.shape, "RemotePrefetch" if b.table else "Param")
    for ep in plan.endpoints:
        for b in plan.ordered_blocks_on(ep):
            for s, kind in plan.chains[b.param].state.items():
                v = _var(block, s)
                add(v, b, b.state_name(s), b.shape if kind == "rows" else v.shape, "Optimizer", kind)
    return ov


def build_plan(cfg, program, trainer_id, endpoints, trainers, sync_mode):
    plan = PsPlan(cfg, trainer_id, endpoints, trainers, sync_mode)
    block = program.global_block()
    _collect_chains(plan, block)
    _find_tables(plan, block)
    _classify_vars(plan, block)
    _split_step_counters(plan, block)
    _slice(plan, block)
    _check_rowwise(plan, block)
    _dispatch(plan, program)
    _record_meta(plan, block)
    plan.digest = _digest(plan)
    plan.overview = _overview(plan, block)
    return plan
