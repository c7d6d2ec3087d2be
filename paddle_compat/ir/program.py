"""Program: the blocks a Fluid script records (block 0 the global block), the unit an Executor lowers and runs.
ProgramDesc: Paddle's desc-level view of a Program (`program.desc`, `fluid.core.ProgramDesc()`)."""

import contextlib
import copy
import itertools

from .block import Block
from .dtypes import VarType
from .operator import Operator
from .proto_desc import PROGRAM_VERSION, decode_program, io_names, serialize_program
from .proto_wire import WireError
from .prune import prune_with_input
from .recording import notify_changed
from .roles import OP_ROLE_KEY, OpRole
from .variable import Parameter, Variable
from .views import View

__all__ = ["Program", "ProgramDesc", "prune_for_inference"]

_program_ids = itertools.count()


class Program:
    # the identity and edit count are slots, out of __dict__: a program and its clone have equal __dict__s
    # (Paddle's test_desc_clone compares them item by item)
    __slots__ = ("_uid", "_version", "__dict__", "__weakref__")

    def __init__(self):
        self.blocks = [Block(self, 0)]
        self.current_block_idx = 0
        self._seed = 0
        self._version = 0
        self._uid = next(_program_ids)
        self._current_role = OpRole.Forward
        self._op_role_var = []
        # attributes set by the transpilers (Paddle's names)
        self._is_distributed = False
        self._is_chief = False
        self._endpoints = []
        self._ps_endpoint = None
        self._trainers_endpoints = []
        self._distributed_lookup_table = None
        self._nccl_comm_num = 1
        # pserver mode: transpiler.details.VarsDistributed, where every parameter block lives (Paddle's record)
        self._parameters_on_pservers = None

    def _bump(self):
        self._version += 1

    # blocks ------------------------------------------------------------------------------------
    def global_block(self):
        return self.blocks[0]

    def block(self, index):
        return self.blocks[index]

    def current_block(self):
        return self.blocks[self.current_block_idx]

    @property
    def num_blocks(self):
        return len(self.blocks)

    def _create_block(self, parent_idx=None):
        parent = self.current_block_idx if parent_idx is None else parent_idx
        b = Block(self, len(self.blocks), parent)
        self.blocks.append(b)
        self.current_block_idx = b.idx
        self._bump()
        return b

    def _rollback(self):
        self.current_block_idx = self.current_block().parent_idx

    # misc Paddle API ---------------------------------------------------------------------------
    @property
    def random_seed(self):
        return self._seed

    @random_seed.setter
    def random_seed(self, seed):
        if not isinstance(seed, int):
            raise ValueError("Program.random_seed must be an int, got %r" % (seed,))
        self._seed = seed

    def list_vars(self):
        for b in self.blocks:
            for v in b.vars.values():
                yield v

    def all_parameters(self):
        return self.global_block().all_parameters()

    @property
    def _op_role(self):
        return self._current_role

    @_op_role.setter
    def _op_role(self, role):
        self._current_role = role

    @contextlib.contextmanager
    def _role_guard(self, role, role_var=None):
        old = (self._current_role, self._op_role_var)
        self._current_role = role
        self._op_role_var = [v if isinstance(v, str) else v.name for v in (role_var or [])]
        try:
            yield
        finally:
            self._current_role, self._op_role_var = old

    def _optimized_guard(self, param_and_grads):
        return self._role_guard(OpRole.Optimize, param_and_grads)

    def _lr_schedule_guard(self, is_with_opt=False):
        role = OpRole.LRSched | (OpRole.Optimize if is_with_opt else 0)
        return self._role_guard(role)

    def _backward_role_guard(self):
        return self._role_guard(OpRole.Backward)

    def to_string(self, throw_on_error=False, with_details=False):
        return "\n".join(b.to_string(throw_on_error, with_details) for b in self.blocks)

    __str__ = to_string

    @property
    def desc(self):
        """Paddle's `program.desc` (fluid.core.ProgramDesc): a view of this program."""
        return ProgramDesc(self)

    def _sync_with_cpp(self):
        """No-op: there is no C++ desc to keep in sync."""

    @staticmethod
    def parse_from_string(binary_str):
        """A Program from Paddle's ProgramDesc bytes (a __model__ or .pdmodel file's contents)."""
        return _from_desc_records(decode_program(binary_str))

    def __repr__(self):
        return "<Program %d: %d blocks, %d ops>" % (self._uid, len(self.blocks), sum(len(b.ops) for b in self.blocks))

    # cloning -----------------------------------------------------------------------------------
    def clone(self, for_test=False):
        """A deep copy. for_test: drop backward/optimize ops and set is_test on ops that have it
        (Paddle's clone(for_test=True) = prune_backward + inference optimize)."""
        p = Program()
        p._seed = self._seed
        for name in ("_is_distributed", "_is_chief", "_endpoints", "_ps_endpoint", "_trainers_endpoints",
                     "_distributed_lookup_table", "_nccl_comm_num"):
            setattr(p, name, copy.copy(getattr(self, name)))
        p._parameters_on_pservers = self._parameters_on_pservers    # a read-only record: shared
        p.blocks = []
        for b in self.blocks:
            nb = Block(p, b.idx, b.parent_idx)
            nb.forward_block_idx = b.forward_block_idx
            p.blocks.append(nb)
        for b, nb in zip(self.blocks, p.blocks):
            for v in b.vars.values():
                nb.vars[v.name] = v._copy_meta_to(nb)
            for op in b.ops:
                role = op.attrs.get(OP_ROLE_KEY, 0)
                # a test program neither trains, schedules the learning rate nor talks to pservers (RPC:
                # send/recv/barriers, Dist: their split/concat), as Paddle's prune_backward keeps only
                # forward ops
                if for_test and role & (OpRole.Backward | OpRole.Optimize | OpRole.LRSched | OpRole.RPC |
                                        OpRole.Dist):
                    continue
                nop = op.copy_to(nb)
                if for_test and "is_test" in nop.attrs:
                    nop.attrs["is_test"] = True
                nb.ops.append(nop)
        if for_test:
            _drop_backward_blocks(p)
            _drop_grad_vars(p)
        notify_changed(p, "clone")
        return p

    def _prune(self, targets):
        return self._prune_with_input([], targets)

    def _prune_with_input(self, feeded_var_names, targets):
        """A new program holding the ops (and their variables) that `targets` (Variables, names or Operators)
        need when `feeded_var_names` are fed, as Paddle 1.8 prunes (ir/prune.py)."""
        feeds = list(feeded_var_names) if isinstance(feeded_var_names, (list, tuple)) else [feeded_var_names]
        for v in feeds:
            if not isinstance(v, str):
                raise ValueError("All feeded_var_names of Program._prune_with_input() can only be str, but "
                                 "received %s." % type(v))
        targets = list(targets) if isinstance(targets, (list, tuple)) else [targets]
        res, origin = prune_with_input(self, feeds, targets)
        res._copy_param_info_from(self)
        res._copy_data_info_from(self, origin)
        res._copy_dist_param_info_from(self)
        return res

    def _inference_optimize(self, prune_read_op=True):
        """A copy with is_test set on the ops that have it; prune_read_op drops the reader ops up to and
        including the first `read` of the global block and the reader variables (as Paddle does)."""
        p = self.clone()
        gb = p.global_block()
        if prune_read_op:
            read_idx = next((i for i, op in enumerate(gb.ops) if op.type == "read"), None)
            if read_idx is not None:
                gb.ops = gb.ops[read_idx + 1:]
            for name in [n for n, v in gb.vars.items() if v.type == VarType.READER]:
                del gb.vars[name]
        for b in p.blocks:
            for op in b.ops:
                if "is_test" in op.attrs:
                    op.attrs["is_test"] = True
        p._bump()
        return p

    def _copy_param_info_from(self, other):
        """Turn this program's variables that are parameters of `other` into Parameters (as clone does)."""
        if not isinstance(other, Program):
            raise TypeError("Program._copy_param_info_from needs a source Program, got %s" % type(other).__name__)
        gb = self.global_block()
        for param in other.global_block().all_parameters():
            if param.name in gb.vars and not isinstance(gb.vars[param.name], Parameter):
                gb.vars[param.name] = param._copy_meta_to(gb)
        self._bump()

    def _copy_data_info_from(self, other, pruned_origin_block_id_map=None):
        """Copy is_data, need_check_feed and stop_gradient (when set) from the same-named variables of
        `other`, block i from block pruned_origin_block_id_map[i] (default: the same index), as Paddle's
        clone does. A variable `other` lacks is a ValueError (it names the variable)."""
        if not isinstance(other, Program):
            raise TypeError("Program._copy_data_info_from needs a source Program, got %s" % type(other).__name__)
        block_map = pruned_origin_block_id_map or {i: i for i in range(len(self.blocks))}
        for i, block in enumerate(self.blocks):
            other_block = other.blocks[block_map[i]]
            for var in list(block.vars.values()):
                other_var = other_block.var(var.name)
                if other_var.is_data:
                    var.is_data = True
                if other_var.need_check_feed:
                    var.need_check_feed = True
                if other_var.stop_gradient:
                    var.stop_gradient = True
        self._bump()

    def _copy_dist_param_info_from(self, other):
        """Copy the distributed-training settings (transpiler marks) of `other`."""
        if not isinstance(other, Program):
            raise TypeError("Program._copy_dist_param_info_from needs a source Program, got %s"
                            % type(other).__name__)
        for name in ("_is_distributed", "_is_chief", "_endpoints", "_ps_endpoint", "_trainers_endpoints",
                     "_distributed_lookup_table"):
            setattr(self, name, copy.copy(getattr(other, name)))
        self._parameters_on_pservers = other._parameters_on_pservers


def _drop_backward_blocks(program):
    """Paddle's prune_backward also removes the blocks append_backward created for a loss inside a
    sub-block (forward_block_idx set) and numbers the others again; the ops owning them were backward ops."""
    kept = [b for b in program.blocks if b.forward_block_idx < 0]
    if len(kept) == len(program.blocks):
        return
    new_idx = {b.idx: i for i, b in enumerate(kept)}
    for b in kept:
        b.parent_idx = new_idx[b.parent_idx] if b.parent_idx >= 0 else -1
    for i, b in enumerate(kept):
        b.idx = i
    program.blocks = kept
    program.current_block_idx = 0


def _drop_grad_vars(program):
    """Paddle's prune_backward keeps only the variables the remaining ops use: gradients, the learning rate
    and optimizer state go with the backward and optimize ops.  A variable any kept op of any block uses
    stays (sub-block ops read their parents' variables)."""
    used = set()
    for b in program.blocks:
        for op in b.ops:
            used.update(op.input_arg_names)
            used.update(op.output_arg_names)
    for b in program.blocks:
        for name in list(b.vars):
            if name not in used:
                del b.vars[name]


def prune_for_inference(program, feed_names, target_names):
    """A for_test clone holding only the ops the targets need (given the feeds), and their variables."""
    test = program.clone(for_test=True)
    gb = test.global_block()
    needed = set(target_names)
    keep = []
    feeds = set(feed_names)
    for op in reversed(gb.ops):
        if op.attrs.get(OP_ROLE_KEY, 0) & (OpRole.Backward | OpRole.Optimize | OpRole.LRSched):
            continue
        outs = set(op.output_arg_names)
        if outs & needed and not outs <= feeds:
            keep.append(op)
            needed.update(op.input_arg_names)
    keep.reverse()
    gb.ops = keep
    used = set(feed_names) | set(target_names)
    for op in keep:
        used.update(op.input_arg_names)
        used.update(op.output_arg_names)
    for name in list(gb.vars):
        if name not in used:
            del gb.vars[name]
    test._bump()
    return test


def _from_desc_records(records):
    """A Program from proto_desc.decode_program's records (Program.parse_from_string)."""
    p = Program()
    p.blocks = [Block(p, idx, parent) for idx, parent, _, _, _ in records]
    for b, (_, _, forward, _, _) in zip(p.blocks, records):
        b.forward_block_idx = forward

    def resolve(v):
        if isinstance(v, tuple) and v and v[0] == "__block__":
            if not 0 <= v[1] < len(p.blocks):
                raise WireError("attribute refers to block %d of %d" % (v[1], len(p.blocks)))
            return p.blocks[v[1]]
        if isinstance(v, list) and v and isinstance(v[0], tuple):
            return [resolve(x) for x in v]
        return v

    for b, (_, _, _, var_records, op_records) in zip(p.blocks, records):
        for d in var_records:
            b.vars[d["name"]] = Variable(b, **d)
        for op_type, inputs, outputs, attrs in op_records:
            b.ops.append(Operator(b, op_type, inputs, outputs, {k: resolve(v) for k, v in attrs.items()}))
    p._bump()
    return p


class ProgramDesc(View):
    """core.ProgramDesc(): a new, empty program (one block); ProgramDesc(bytes): parsed from Paddle's
    ProgramDesc bytes; ProgramDesc(other_desc): a copy."""
    __slots__ = ()

    def __init__(self, source=None):
        if source is None:
            program = Program()
        elif isinstance(source, Program):
            program = source
        elif isinstance(source, ProgramDesc):
            program = source._obj.clone()
        elif isinstance(source, (bytes, bytearray)):
            program = Program.parse_from_string(bytes(source))
        else:
            raise TypeError("ProgramDesc() takes nothing, ProgramDesc bytes or another ProgramDesc, got %s"
                            % type(source).__name__)
        super().__init__(program)

    @property
    def program(self):
        return self._obj

    def block(self, index):
        return self._obj.blocks[index].desc

    def num_blocks(self):
        return len(self._obj.blocks)

    def append_block(self, parent):
        """A new block whose parent is `parent` (a BlockDesc); unlike Program._create_block it does not become
        the program's current block."""
        p = self._obj
        b = Block(p, len(p.blocks), parent.id if isinstance(parent, View) else int(parent))
        p.blocks.append(b)
        p._bump()
        return b.desc

    def serialize_to_string(self):
        return serialize_program(self._obj)

    def get_feed_target_names(self):
        return io_names(self._obj, "feed", "Out")

    def get_fetch_target_names(self):
        return io_names(self._obj, "fetch", "X")

    def flush(self):
        """Nothing to flush: there is no C++ side."""

    def _version(self):
        return PROGRAM_VERSION
