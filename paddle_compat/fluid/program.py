"""Block and Program: ordered ops over named variables, the unit an Executor lowers and runs."""

import collections
import contextlib
import copy
import itertools

from .operator import (OP_CALLSTACK_KEY, OP_ROLE_KEY, OP_ROLE_VAR_KEY, OP_NAMESCOPE_KEY, Operator, OpRole,
                       creation_callstack, user_callsite)
from ..ops import protos as _protos
from . import eager_op as _eager
from .dtypes import VarType
from .variable import Parameter, Variable

_program_ids = itertools.count()

# Called with (program, what) after each public change of a program; tests install the verifier here.
change_hooks = []

OP_DEVICE_KEY = "op_device"
# the device fluid.device_guard names for the ops built inside it (Paddle's framework._current_device)
_current_device = None


def switch_device(device):
    global _current_device
    old, _current_device = _current_device, device
    return old


class NameScope:
    """One level of fluid.name_scope (Paddle's framework.NameScope): a prefix used again under the same
    parent gets _1, _2, ... ("optimizer", "optimizer_1"). Global, as in Paddle: the ops of every program
    built inside take its path (the startup program's initializers too)."""

    def __init__(self, name="", parent=None):
        self.name, self.parent, self._children = name, parent, {}
        self.path = (parent.path if parent is not None else "/") + (name + "/" if name else "")

    def child(self, prefix):
        n = self._children.get(prefix, 0)
        self._children[prefix] = n + 1
        return NameScope(prefix if n == 0 else "%s_%d" % (prefix, n), self)


_name_scope = NameScope()


def switch_name_scope(scope):
    global _name_scope
    old, _name_scope = _name_scope, scope
    return old


def current_name_scope():
    return _name_scope


def notify_changed(program, what):
    for hook in change_hooks:
        hook(program, what)


class Block:
    def __init__(self, program, idx, parent_idx=-1):
        self.program = program
        self.idx = idx
        self.parent_idx = parent_idx
        self.forward_block_idx = -1
        self.vars = collections.OrderedDict()
        self.ops = []

    @property
    def parent(self):
        return self.program.block(self.parent_idx) if self.parent_idx >= 0 else None

    @property
    def backward_block_idx(self):
        """The block holding this block's gradient ops (append_backward of a loss recorded here), or -1."""
        for b in self.program.blocks:
            if b.forward_block_idx == self.idx:
                return b.idx
        return -1

    def _set_forward_block_idx(self, idx):
        self.forward_block_idx = idx

    # variables ---------------------------------------------------------------------------------
    def var(self, name):
        if not isinstance(name, str):
            raise TypeError("var name must be str, got %r" % (name,))
        v = self.vars.get(name)
        if v is None:
            raise ValueError("var %s not in this block" % name)
        return v

    def has_var(self, name):
        return name in self.vars

    def _find_var_recursive(self, name):
        """This block, then its ancestors; a backward block (see backward_block_idx) then also sees its
        forward block's variables, as Paddle's lookup does: its grad ops read what the forward ops made."""
        b = self
        fwd = -1
        while b is not None:
            if name in b.vars:
                return b.vars[name]
            if fwd < 0:
                fwd = b.forward_block_idx
            b = b.parent
        return self.program.block(fwd)._find_var_recursive(name) if fwd >= 0 else None

    def _var_recursive(self, name):
        v = self._find_var_recursive(name)
        if v is None:
            raise ValueError("var %s is not in block %d or its ancestors" % (name, self.idx))
        return v

    def create_var(self, **kwargs):
        if _eager.active():      # inside fluid.dygraph.guard: a VarBase (Paddle's _varbase_creator)
            return _eager.create_var(**kwargs)
        name = kwargs.get("name")
        if name is not None and name in self.vars:
            # Paddle returns the existing variable (create_var is idempotent by name), but refuses a
            # different shape for it
            old, shape = self.vars[name], kwargs.get("shape")
            if shape is not None and old.shape and tuple(int(d) for d in shape) != tuple(old.shape):
                raise ValueError("Variable %s has been created before with shape %s; the new shape %s does not "
                                 "match" % (name, tuple(old.shape), tuple(shape)))
            return old
        v = Variable(self, **kwargs)
        self.vars[v.name] = v
        self.program._bump()
        return v

    def create_parameter(self, **kwargs):
        """Parameters live in the global block (Paddle's rule)."""
        gb = self.program.global_block()
        name = kwargs.get("name")
        if name in gb.vars and isinstance(gb.vars[name], Parameter):
            return gb.vars[name]
        initializer = kwargs.pop("initializer", None)
        p = Parameter(gb, **kwargs)
        gb.vars[p.name] = p
        self.program._bump()
        if initializer is not None:
            initializer(p, gb)
        return p

    def _remove_var(self, name):
        self.vars.pop(name, None)
        self.program._bump()

    remove_var = _remove_var

    def _rename_var(self, old, new):
        v = self.vars.pop(old)
        v.name = new
        self.vars[new] = v
        for op in self.ops:
            op._rename_input(old, new)
            op._rename_output(old, new)
        self.program._bump()
        return v

    def all_parameters(self):
        return [v for v in self.vars.values() if isinstance(v, Parameter)]

    def iter_parameters(self):
        return iter(self.all_parameters())

    # operators ---------------------------------------------------------------------------------
    def _make_op(self, type, inputs, outputs, attrs, stop_gradient=False):
        if type is None:
            raise ValueError("`type` to initialized an Operator can not be None.")
        if not _protos.is_known_type(type):
            raise ValueError("Operator \"%s\" has not been registered." % type)
        attrs = dict(attrs or {})
        prog = self.program
        attrs.setdefault(OP_ROLE_KEY, prog._current_role)
        if prog._op_role_var and OP_ROLE_VAR_KEY not in attrs:
            attrs[OP_ROLE_VAR_KEY] = list(prog._op_role_var)
        # Paddle's full name scope: "/" outside any name_scope
        attrs.setdefault(OP_NAMESCOPE_KEY, _name_scope.path)
        attrs.setdefault(OP_CALLSTACK_KEY, creation_callstack())
        if _current_device is not None:
            attrs[OP_DEVICE_KEY] = _current_device
        # the defaults Paddle's attribute checker fills in (an attribute given as None takes its default too)
        for name, default in _protos.attr_defaults(type):
            if attrs.get(name) is None:
                attrs[name] = copy.copy(default)
        op = Operator(self, type, inputs, outputs, attrs, callsite=user_callsite())
        # Paddle points each output Variable given to the op at it (`var.op`)
        for args in (outputs or {}).values():
            for a in (args if isinstance(args, (list, tuple)) else [args]):
                if isinstance(a, Variable):
                    a.op = op
        return op

    def append_op(self, type=None, inputs=None, outputs=None, attrs=None, stop_gradient=False, **kw):
        if _eager.active():      # inside fluid.dygraph.guard: run the op now (Paddle's tracer)
            if type is None:
                raise ValueError("`type` to initialized an Operator can not be None.")
            return _eager.trace_op(type, inputs, outputs, attrs, stop_gradient)
        op = self._make_op(type, inputs, outputs, attrs)
        self.ops.append(op)
        self.program._bump()
        return op

    def _insert_op(self, index, type=None, inputs=None, outputs=None, attrs=None, **kw):
        op = self._make_op(type, inputs, outputs, attrs)
        self.ops.insert(index, op)
        self.program._bump()
        return op

    def _prepend_op(self, type=None, inputs=None, outputs=None, attrs=None, **kw):
        return self._insert_op(0, type, inputs, outputs, attrs)

    def _remove_op(self, index, end=None):
        if end is None:
            del self.ops[index]
        else:
            del self.ops[index:end]
        self.program._bump()

    insert_op = _insert_op
    prepend_op = _prepend_op
    remove_op = _remove_op

    def _sync_with_cpp(self):
        """No-op: there is no C++ desc to keep in sync."""

    @property
    def desc(self):
        """Paddle's `block.desc` (fluid.core.BlockDesc): a view of this block."""
        from .desc import BlockDesc
        return BlockDesc(self)

    # printing ----------------------------------------------------------------------------------
    def to_string(self, throw_on_error=False, with_details=False):
        lines = ["{ // block %d%s" % (self.idx, (" (parent %d)" % self.parent_idx) if self.parent_idx >= 0 else "")]
        for v in self.vars.values():
            lines.append("    " + v.to_string(throw_on_error, with_details))
        if self.vars:
            lines.append("")
        for op in self.ops:
            lines.append("    " + op.to_string())
        lines.append("}")
        return "\n".join(lines)

    __str__ = to_string


class Program:
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
        # runtime facts the transpilers leave for the backends (dist mode, endpoints, ...)
        self._dist_info = {}

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
        from .desc import ProgramDesc
        return ProgramDesc(self)

    def _sync_with_cpp(self):
        """No-op: there is no C++ desc to keep in sync."""

    @staticmethod
    def parse_from_string(binary_str):
        """A Program from Paddle's ProgramDesc bytes (a __model__ or .pdmodel file's contents)."""
        from .proto_desc import parse_program
        return parse_program(binary_str)

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
        p._dist_info = copy.deepcopy(self._dist_info)
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
        """The ops `targets` need, given the fed variables (Paddle's low-level pruning API)."""
        from .serialization import prune_for_inference
        feeds = feeded_var_names if isinstance(feeded_var_names, (list, tuple)) else [feeded_var_names]
        for v in feeds:
            if not isinstance(v, str):
                raise ValueError("_prune_with_input: feeded_var_names must hold variable names (str), got %r" % (v,))
        targets = targets if isinstance(targets, (list, tuple)) else [targets]
        names = [t if isinstance(t, str) else t.name for t in targets]
        return prune_for_inference(self, list(feeds), names)

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
