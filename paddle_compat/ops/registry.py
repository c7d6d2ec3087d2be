"""The one table of op facts: op type -> OpDef (slots, output shapes, gradient facts, distributed facts, and
the kernel a backend registered for it).

Every op type is declared once, in ops/defs/ (`defop` over its kernel factory, or `declare` when the kernel
lives with a backend: communication, I/O, optimizer updates, the lowering's fused ops). A backend registers
a kernel only against a declared type (`kernel`); a kernel for an undeclared type is an error.

It sits below both the front end (layer builders ask it for output shapes) and the backends (the lowering asks
it for kernels, autograd asks it which ops carry gradient). It imports neither torch nor paddle_compat.fluid:
kernel factories only run when a block is lowered, and op modules reach torch through `ir.lazy.torch`.

Slot specs say how the kernel receives arguments:
  inputs:  "X" one tensor (None if the slot is absent), "X*" a list of tensors (duplicable slot)
  outputs: "Out" one tensor, "Out*" a list of tensors
LoD-aware kernels list the input slots whose LoD they read (`lod_in`, passed after the tensors) and the
output slots whose LoD they compute (`lod_out`, returned after the tensors); "X*" there means one LoD per
variable of a duplicable slot. A LoD is a tuple of int64 offset tensors, one per level, on the data's
device (None when the variable has none). Outputs not listed share the LoD of the first LoD input
(Paddle's ShareLoD), when the output variable has lod_level > 0.
"""

import sys

from ..ir.proto_desc import recorded_protos

__all__ = ["OpDef", "OutMeta", "HOST_REASONS", "defop", "declare", "kernel", "find", "get", "info", "known_op_types",
           "is_differentiable", "no_grad_slots", "attr", "aliased_outputs"]


class OutMeta:
    """What infer_shape says of one output variable."""
    __slots__ = ("shape", "dtype", "lod_level")

    def __init__(self, shape, dtype, lod_level=0):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.lod_level = lod_level

    def __repr__(self):
        return "OutMeta(%s, %s, lod_level=%d)" % (list(self.shape), self.dtype, self.lod_level)


# OpDef.host: why an op's kernel needs the host in the middle of a step (the text completes "op 'x' ...")
HOST_REASONS = {
    "python": "runs Python code",
    "print": "prints tensor values",
    "reader": "reads the next batch from a reader",
    "file": "reads or writes files",
    "rpc": "talks to parameter servers over RPC",
    "collective": "is a process-group call (not captured yet)",
    "generator": "draws from a generator kept on the host",
    "array": "keeps a tensor array or rank table on the host",
    "control": "is control flow decided on the host",
    "data": "has an output whose size depends on the data",
    "reads": "reads tensor values on the host",
    "cpu": "runs on the CPU (Paddle 1.8 has only a CPU kernel for it)",
}

# OpDef.ps_plan: which transpiler record an op carries (None: none)
PS_PLANS = (None, "trainer", "pserver")
# Paddle's name for an attribute given as a tensor input (ShapeTensor, StartsTensorList, ...): read on the host
_HOST_SLOT_SUFFIXES = ("Tensor", "TensorList")


class OpDef:
    """Everything the project knows about one op type.

    infer_shape(ins, attrs) -> {output slot: OutMeta or [OutMeta, ...]}; `ins` maps input slot -> list of
    front-end Variables (anything with .shape/.dtype/.lod_level). Only needed by builders that use
    `layers.utils.append_defined`.
    factory(op, ctx) -> the callable the generated code calls each run (see module doc for slots).
    differentiable: False when no output carries gradient to any input (the op is skipped by backward).
    no_grad: input slots that never receive gradient (labels, ids, lengths).
    Distributed facts (what the parameter-server transpiler and backward ask):
    row_wise: the op acts row by row, so running it on a row block of a parameter equals running it on the
      whole parameter (a pserver may run it on its shard).
    sparse_grad_slot: the input slot whose gradient is row-sparse (SelectedRows) when is_sparse=True.
    random_init: an initializer drawing from a seeded generator (a sharded startup re-seeds it per shard).
    lookup: a table lookup (Ids into W) the transpiler may distribute.
    ps_plan: the transpiler record its kernel reads from its own attributes (backends/ps/records.py):
      "trainer" (a trainer's send / recv / ... op carries the TrainerPlan), "pserver" (listen_and_serv carries
      the PserverPlan); None: it carries none.
    native_rows: its kernel takes a row-sparse input as the core.SelectedRows itself (rows, height, values);
      every other kernel gets it as torch's sparse COO tensor (backends/lowering/emit.py).
    Host facts (what keeps a step from being one CUDA graph, backends/lowering/capture_check.py):
    host: why the op needs the host in the middle of a step, a key of HOST_REASONS (Python code, files, RPC,
      control flow decided on the host, an output sized by the data, ...); None: it runs on the device.
    device_when: for an op declared `host`, a predicate (op, program) -> bool on one op: where it holds,
      that op runs on the device after all (a conditional_block whose small body runs predicated).
    fed_index: (op, block) -> (input name, bound, error(values) -> exception) or None: an input whose values
      index something of `bound` entries (a lookup's ids, one_hot's labels). On a device a fed value of
      that variable is checked on the host before it is uploaded (backends/feeds.py): no sync, and the only
      check a CUDA-graph replay gets.
    host_inputs: input slots whose tensor the kernel reads on the host (reshape's Shape, interp's OutSize): an
      op given one is not captured. Slots named ...Tensor / ...TensorList (Paddle's attribute given as a
      tensor: ShapeTensor, StartsTensorList) are read on the host for every op, so they need no listing.
    random: the op draws from a random generator (a fixed seed makes a generator per step, on the host).
    operator_base: Paddle 1.8 runs the op without a kernel (an OperatorBase: feed, fetch, while, recv, ...), so
      FLAGS_check_nan_inf never checks its outputs (backends/lowering/nan_check.py).
    runtime: the backend runtime whose module registers this op's kernel when a program first needs it
      ("ps": the pserver runtime, backends/ps/kernels.py); None: the lowering's own kernels.
    grad_lod: which input gradients carry a LoD (Paddle 1.8.5's grad op calls ShareLoD in its InferShape):
      (slot, source[, when]) entries, a plain "X" being ("X", "X"): the gradient of input `slot` takes the
      LoD of the grad op's input `source` (a forward input "X", or an output gradient "Out@GRAD"), only
      when `when` (a grad-op input) holds a LoD if given. Undeclared gradients carry none. Each fact is
      recorded from Paddle (tests/data/paddle18/make_grad_lod.py); backends/lowering/grad_lod.py reads them.
    attrs: ((name, AttrType, default), ...) for an op type Paddle 1.8.5 does not declare; Paddle's own ops
      take theirs from Paddle's recorded protos (ir/op_protos.json), so the two never disagree.
    """
    __slots__ = ("type", "inputs", "outputs", "factory", "lod_in", "lod_out", "infer_shape", "differentiable",
                 "no_grad", "where", "row_wise", "sparse_grad_slot", "random_init", "lookup", "attrs",
                 "host", "random", "operator_base", "runtime", "kernel_where", "ps_plan", "native_rows",
                 "host_inputs", "grad_lod", "device_when", "fed_index")

    def __init__(self, type, inputs=("X",), outputs=("Out",), factory=None, lod_in=(), lod_out=(),
                 infer_shape=None, differentiable=True, no_grad=(), where=None, row_wise=False,
                 sparse_grad_slot=None, random_init=False, lookup=False, attrs=(), host=None,
                 random=False, operator_base=False, runtime=None, ps_plan=None, native_rows=False,
                 host_inputs=(), grad_lod=(), device_when=None, fed_index=None):
        self.type = type
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.factory = factory
        self.lod_in = tuple(lod_in)
        self.lod_out = tuple(lod_out)
        self.infer_shape = infer_shape
        self.differentiable = differentiable
        self.no_grad = frozenset(no_grad)
        self.where = where
        self.row_wise = bool(row_wise)
        self.sparse_grad_slot = sparse_grad_slot
        self.random_init = bool(random_init)
        self.lookup = bool(lookup)
        self.attrs = tuple(attrs)
        if host is not None and host not in HOST_REASONS:
            raise ValueError("op %s: host=%r is not one of %s" % (type, host, ", ".join(sorted(HOST_REASONS))))
        self.host = host
        self.device_when = device_when
        self.fed_index = fed_index
        self.random = bool(random)
        self.operator_base = bool(operator_base)
        self.runtime = runtime
        if ps_plan not in PS_PLANS:
            raise ValueError("op %s: ps_plan=%r is not one of %s" % (type, ps_plan, PS_PLANS))
        self.ps_plan = ps_plan
        self.native_rows = bool(native_rows)
        self.host_inputs = frozenset(host_inputs)
        self.grad_lod = tuple((g, g, None) if isinstance(g, str) else (tuple(g) + (None,))[:3] for g in grad_lod)
        self.kernel_where = where if factory is not None else None

    def input_slots(self):
        return [s.rstrip("*") for s in self.inputs]

    def output_slots(self):
        return [s.rstrip("*") for s in self.outputs]

    def host_need(self, op):
        """Why this op needs the host mid-step (a key of HOST_REASONS), or None."""
        if self.host is None or (self.device_when is not None and op.block is not None and
                                 self.device_when(op, op.block.program)):
            return None
        return self.host

    def reads_on_host(self, slot):
        """Whether the kernel reads input `slot` on the host (see host_inputs)."""
        return slot in self.host_inputs or slot.endswith(_HOST_SLOT_SUFFIXES)


_DEFS = {}


def _types(op_types):
    return [op_types] if isinstance(op_types, str) else list(op_types)


def defop(op_types, inputs=("X",), outputs=("Out",), lod_in=(), lod_out=(), infer_shape=None,
          differentiable=True, no_grad=(), **facts):
    """Decorator over a kernel factory: declares op type(s) with all their facts, and their kernel, in one
    place (facts: row_wise, sparse_grad_slot, random_init, lookup, ps_plan, native_rows, attrs, host,
    host_inputs, random, operator_base, runtime, grad_lod; see OpDef).

        @defop("cumsum", infer_shape=same_as("X"))
        def cumsum(op, ctx):
            axis = attr(op, "axis", -1)
            return lambda x: torch.cumsum(x, axis)
    """
    def deco(factory):
        for t in _types(op_types):
            _add(OpDef(t, inputs, outputs, factory, lod_in, lod_out, infer_shape, differentiable, no_grad,
                       where=getattr(factory, "__module__", None), **facts))
        return factory

    return deco


def declare(op_types, inputs=("X",), outputs=("Out",), lod_in=(), lod_out=(), infer_shape=None,
            differentiable=True, no_grad=(), where=None, **facts):
    """Declares op type(s) whose kernel a backend registers (`kernel`), or that no kernel runs (feed, fetch:
    the executor's own)."""
    where = where or sys._getframe(1).f_globals.get("__name__")
    for t in _types(op_types):
        _add(OpDef(t, inputs, outputs, None, lod_in, lod_out, infer_shape, differentiable, no_grad,
                   where=where, **facts))


def kernel(op_types):
    """Decorator a backend puts on a kernel factory: registers it for declared op type(s). A type that is not
    declared in ops/defs, or that already has a kernel, is an error."""
    def deco(factory):
        where = getattr(factory, "__module__", None)
        for t in _types(op_types):
            d = find(t)
            if d is None:
                raise ValueError("kernel %s.%s: op type '%s' is not declared (declare it in paddle_compat/ops/defs/)"
                                 % (where, getattr(factory, "__name__", "?"), t))
            if d.factory is not None:
                raise ValueError("op %s has two kernels (%s and %s)" % (t, d.kernel_where, where))
            d.factory, d.kernel_where = factory, where
        return factory

    return deco


def _add(d):
    _load()     # the built-in definitions first, so a clash is always reported
    if d.attrs and d.type in recorded_protos():
        raise ValueError("op %s (%s) declares attributes, but it is Paddle's: its attribute types and defaults "
                         "are Paddle 1.8.5's (ir/op_protos.json)" % (d.type, d.where))
    if d.type in _DEFS:
        raise ValueError("op %s is defined twice (%s and %s)" % (d.type, _DEFS[d.type].where, d.where))
    _DEFS[d.type] = d


def attr(op, name, default=None):
    return op.attrs.get(name, default)


def find(op_type):
    """The OpDef of op_type, or None."""
    _load()
    return _DEFS.get(op_type)


def get(op_type):
    _load()
    d = _DEFS.get(op_type)
    if d is None:
        raise NotImplementedError("op type '%s' is not defined (known: %d op types; see paddle_compat/ops/)"
                                  % (op_type, len(_DEFS)))
    return d


def known_op_types():
    _load()
    return set(_DEFS)


_UNDECLARED = OpDef("", inputs=(), outputs=())


def info(op_type):
    """The declared facts of op_type (an OpDef); for an undeclared type (a grad op, a custom op) one whose
    facts are all off: `ops.info(op.type).row_wise`."""
    return find(op_type) or _UNDECLARED


def is_differentiable(op_type):
    """Whether an op of this type carries gradient from its outputs to its inputs (an undeclared type: yes)."""
    d = find(op_type)
    return d.differentiable if d is not None else True


def no_grad_slots(op_type):
    d = find(op_type)
    return d.no_grad if d is not None else frozenset()


def aliased_outputs(op):
    """Names an op lists as outputs but its kernel never writes because they are its own inputs (Paddle's
    hierarchical_sigmoid names W again under W_Out): the variable keeps its value, so it stays a leaf."""
    d = find(op.type)
    if d is None:
        return set()
    written = set(d.output_slots())
    ins = set(op.input_arg_names)
    return {a for slot, args in op.outputs.items() if slot not in written for a in args if a in ins}


_loaded = False


def _load():
    """Op definitions load on first question; torch-backed legacy kernels load with the backend."""
    global _loaded
    if not _loaded:
        _loaded = True
        # kept in a function: the table loads its own definitions (ops/defs imports this module) on first question
        from . import defs  # noqa: F401
