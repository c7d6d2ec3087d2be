"""Control flow with sub-blocks (while, conditional_block, select_input) and LoDTensorArray ops.

A sub-block is lowered once, when the op that owns it is lowered, to its own generated function; the op's
kernel is plain Python control flow (`while`, `if`) around calls of that function. Values cross the
boundary by name: the sub-block takes the op's inputs (and the current values of what it writes) and
returns what it writes. A LoDTensorArray is a TensorArray: a Python list of tensors (None for a
never-written slot) that also keeps each element's LoD.
"""

from ...ir import convert_dtype
from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop, find
from ..shapes import first, same_as


def _unique(names):
    seen, out = set(), []
    for n in names:
        if n not in seen:
            seen.add(n)
            out.append(n)
    return out


def _lower_sub(op, ctx, in_names, out_names, feed_lod=(), write_scope=True):
    sub = attr(op, "sub_block")
    if sub is None:
        raise ValueError("op '%s' has no sub_block attribute" % op.type)
    return ctx.lower_sub_block(sub.idx, in_names, out_names, feed_lod, write_scope=write_scope)


def _lod_vars(ctx, names):
    """The names among these whose variables may carry a LoD (declared lod_level > 0)."""
    out = set()
    for n in names:
        v = ctx.var(n)
        if v is not None and getattr(v, "lod_level", 0) > 0:
            out.add(n)
    return out


def _check_scalar_bool(t, name, what):
    if t is None:
        raise ValueError("%s: condition variable '%s' has no value" % (what, name))
    if t.dtype != torch.bool or t.numel() != 1:
        raise ValueError("%s: condition variable '%s' must be a bool tensor with one element, got dtype %s "
                         "shape %s" % (what, name, str(t.dtype)[6:], list(t.shape)))


def _scalar_bool(t, name, what):
    _check_scalar_bool(t, name, what)
    return bool(t.reshape(()).item())


# A conditional_block whose body only computes a few small values -- a learning-rate Switch case assigning
# one value (piecewise_decay, linear_lr_warmup) -- runs predicated: its body runs every step and torch.where
# keeps the new values or the old ones by the condition, on the device. Deciding on the host reads the
# condition back: on a GPU a sync every step, and a step that cannot be captured in a CUDA graph
# (capture_check asks predicated() too). The numbers are the same: a case's body only assigns. On the CPU a
# read back is free and running every case is not (about 20 us a step for a 4-value piecewise_decay), so
# there the host decides (tests set PREDICATE_ON_CPU to run the predicated form on the CPU).
PREDICATED_MAX_NUMEL = 64
PREDICATE_ON_CPU = False


def predicated(op, program):
    """Whether a conditional_block runs predicated (above): one scalar condition, no backward block, and a
    body of ops that run on the device (no host need, no random draw, no sub-block, no tensor-valued
    attribute read on the host) over variables of static shapes with at most PREDICATED_MAX_NUMEL
    elements and no LoD, whose persistable results are all the op's outputs, each of which holds a value
    before the op runs and keeps its shape and dtype."""
    if op.type != "conditional_block" or not op.attrs.get("is_scalar_condition") or len(op.input("Cond")) != 1:
        return False
    body = op.attrs.get("sub_block")
    if body is None or body.backward_block_idx >= 0 or not op.output("Out") or not _held_before(op):
        return False
    body, outs = program.block(body.idx), set(op.output("Out"))
    for o in body.ops:
        d = find(o.type)
        if d is None or d.host is not None or d.random or o.attrs.get("sub_block") is not None:
            return False
        for slot, names in o.inputs.items():
            if names and d.reads_on_host(slot):
                return False
        for n in o.input_arg_names + o.output_arg_names:
            v = body._find_var_recursive(n)
            if v is None or getattr(v, "lod_level", 0) or not _small_static(getattr(v, "shape", None)):
                return False
        if any(n not in outs and getattr(body._find_var_recursive(n), "persistable", False)
               for n in o.output_arg_names):
            return False
        if not _keeps_shape(o, body, outs):
            return False
    return True


def _held_before(op):
    """Every output of the op has a value when it runs: persistable (the startup made it), or written by an
    op before it in its block that always runs. (An output with no value is decided on the host each step.)"""
    block = op.block
    if block is None:
        return False
    written = set()
    for o in block.ops:
        if o is op:
            break
        if o.attrs.get("sub_block") is None:    # (a branch that did not run wrote nothing)
            written.update(o.output_arg_names)
    for n in op.output("Out"):
        v = block._find_var_recursive(n)
        if v is None or not (v.persistable or n in written):
            return False
    return True


def _keeps_shape(o, body, outs):
    """An assignment into an outer variable keeps its declared shape and dtype (torch.where selects between
    equal shapes; a case that reshapes its output is decided on the host)."""
    written = [n for n in o.output_arg_names if n in outs]
    if not written:
        return True
    if o.type == "assign":
        src = body._find_var_recursive(o.input("X")[0]) if o.input("X") else None
        shape, dtype = (src.shape, src.dtype) if src is not None else (None, None)
    elif o.type in ("fill_constant", "assign_value"):
        shape, dtype = o.attrs.get("shape"), o.attrs.get("dtype")
    else:
        return True
    for n in written:
        v = body._find_var_recursive(n)
        if shape is None or list(shape) != list(v.shape) or convert_dtype(dtype) != convert_dtype(v.dtype):
            return False
    return True


def _small_static(shape):
    if shape is None:
        return False
    n = 1
    for d in shape:
        if d is None or d < 0:
            return False
        n *= d
    return n <= PREDICATED_MAX_NUMEL


# Paddle's while op: X = what the body reads from outside, Out = outer variables the body writes (the
# condition among them). The body runs until Condition is false; every step sees the last step's values,
# and their LoDs (for variables declared with lod_level > 0).
@defop("while", inputs=("X*", "Condition", "@Out*"), grad_lod=("X",), outputs=("Out*", "StepScopes"), lod_in=("X*", "@Out*"),
       lod_out=("Out*",), host="control", operator_base=True)
def while_(op, ctx):
    xs, outs = op.input("X"), op.output("Out")
    cond = op.input("Condition")[0]
    state = _unique(xs + outs + [cond])
    fetch = _unique(outs + [cond])
    with_lod = _lod_vars(ctx, state)
    body = _lower_sub(op, ctx, state, fetch, with_lod)
    pos = {n: i for i, n in enumerate(fetch)}

    def k(x_vals, c, out_vals, x_lods, out_lods):
        vals = dict(zip(outs, out_vals))
        vals.update(zip(xs, x_vals))
        vals[cond] = c
        lods = dict(zip(outs, out_lods))
        lods.update(zip(xs, x_lods))
        while _scalar_bool(vals[cond], cond, "While"):
            res = body([(vals.get(n), lods.get(n)) if n in with_lod else vals.get(n) for n in state])
            for n in fetch:
                vals[n], lod = res[pos[n]]
                if n in with_lod:
                    lods[n] = lod
        return [vals.get(n) for n in outs], None, [lods.get(n) for n in outs]

    return k


# Paddle's conditional_block: runs its sub-block when Cond holds (a bool scalar with is_scalar_condition,
# else: every Cond tensor is non-empty). Out keeps its previous value and LoD (None: unset) when it does not
# run; LoDs cross the boundary as for while.
@defop("conditional_block", inputs=("Cond*", "Input*", "@Out*"), outputs=("Out*", "Scope"),
       lod_in=("Input*", "@Out*"), lod_out=("Out*",), host="control", device_when=predicated,
       operator_base=True)
def conditional_block(op, ctx):
    ins, outs = op.input("Input"), op.output("Out")
    cond_names = op.input("Cond")
    with_lod = _lod_vars(ctx, ins)
    has_backward = attr(op, "sub_block").backward_block_idx >= 0
    kept = _read_by_backward_block(ctx.program, attr(op, "sub_block"))
    select = predicated(op, ctx.program) and not with_lod and (str(ctx.device) != "cpu" or PREDICATE_ON_CPU)
    # predicated, the body only returns its values (the persistable ones among them are this op's outputs,
    # which the caller writes): a body that wrote the scope itself would write a case that does not hold
    body = _lower_sub(op, ctx, ins, outs + kept, with_lod, write_scope=not select)
    scalar = attr(op, "is_scalar_condition", False)
    n_out = len(outs)

    def k(conds, in_vals, out_vals, in_lods, out_lods):
        if select:
            c = conds[0]
            _check_scalar_bool(c, cond_names[0], "conditional_block")
            if all(o is not None for o in out_vals) and not (torch.is_grad_enabled() and any(
                    getattr(v, "requires_grad", False) for v in in_vals)):
                new = [t for t, _ in body(list(in_vals))]
                if all(type(t) is torch.Tensor and t.shape == o.shape and t.dtype == o.dtype and
                       t.device == o.device for t, o in zip(new, out_vals)):
                    c = c.reshape(())
                    return [torch.where(c, t, o) for t, o in zip(new, out_vals)], None, list(out_lods)
            # (an output with no value yet, or one the body reshapes: decided on the host, as below)
        if scalar:
            run = _scalar_bool(conds[0], cond_names[0], "conditional_block")
        else:
            run = all(c is not None and c.numel() > 0 for c in conds)
        if not run:
            return list(out_vals), None, list(out_lods)
        res = body([(v, l) if n in with_lod else v for n, v, l in zip(ins, in_vals, in_lods)])
        # Scope: the body's values its backward block reads (Paddle keeps the body's scope for
        # conditional_block_grad); None when the body did not run
        scope = {n: t for n, (t, _) in zip(kept, res[n_out:])} if has_backward else None
        return [t for t, _ in res[:n_out]], scope, [l for _, l in res[:n_out]]

    return k


def _read_by_backward_block(program, body):
    """Names made in `body` that the ops of its backward block read (a loss recorded in the body, with
    minimize called there), in order; [] when it has none."""
    idx = body.backward_block_idx
    if idx < 0:
        return []
    made = set()
    for op in body.ops:
        made.update(op.output_arg_names)
    out = []
    for op in program.block(idx).ops:
        for n in op.input_arg_names:
            if n in made and n not in out:
                out.append(n)
    return out


# Runs the backward block of a conditional_block's body (minimize inside a cond branch) after the body
# ran: it reads the body's values from Scope, the outer ones from Input. Its gradients stay in that block,
# where the optimizer ops it also holds read them.
@defop("conditional_block_grad", inputs=("Cond*", "Input*", "Scope"), outputs=(), differentiable=False,
       host="control", operator_base=True)
def conditional_block_grad(op, ctx):
    grad_block = attr(op, "sub_block")
    ins = op.input("Input")
    fwd = ctx.program.block(grad_block.forward_block_idx)
    kept = _read_by_backward_block(ctx.program, fwd)
    body = ctx.lower_sub_block(grad_block.idx, kept + ins, [])

    def k(conds, in_vals, scope):
        if scope is None:     # the body did not run (its condition was false)
            return
        body([scope[n] for n in kept] + list(in_vals))

    return k


def _select_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(x.shape, x.dtype, x.lod_level)}


@defop("select_input", inputs=("X*", "Mask"), lod_in=("X*",), lod_out=("Out",), infer_shape=_select_shape,
       no_grad=("Mask",), host="control", operator_base=True)
def select_input(op, ctx):
    names = op.input("X")

    def k(xs, mask, lods):
        i = int(mask.reshape(-1)[0].item())
        if not 0 <= i < len(xs):
            raise IndexError("select_input: Mask is %d but there are %d inputs (%s)" % (i, len(xs), names))
        if xs[i] is None:
            raise ValueError("select_input: input '%s' (Mask %d) has no value: its branch did not run"
                             % (names[i], i))
        return xs[i], lods[i]

    return k


# ---- LoDTensorArray -------------------------------------------------------------------------------

def _index(i, name, what):
    if i is None:
        raise ValueError("%s: index variable '%s' has no value" % (what, name))
    if i.numel() != 1:
        raise ValueError("%s: index '%s' must hold one integer, got shape %s" % (what, name, list(i.shape)))
    return int(i.reshape(()).item())


class TensorArray(list):
    """A LoDTensorArray value: the list of its tensors, with the LoD of each element beside it in `lods`
    (None: no LoD), so sequences written by beam search come back with their LoD when read."""
    __slots__ = ("lods",)

    def __init__(self, items=(), lods=None):
        super().__init__(items)
        self.lods = list(lods) if lods is not None else [None] * len(self)


# write_to_array's array is its output only (Paddle's form); "@Out" gives the kernel the array so far.
# The kernel returns a new list: a value captured earlier (another branch, a previous step) never changes.
@defop("write_to_array", inputs=("X", "I", "@Out"), lod_in=("X",), no_grad=("I",), host="array", operator_base=True)
def write_to_array(op, ctx):
    iname, aname = op.input("I")[0], op.output("Out")[0]

    def k(x, i, arr, lod):
        j = _index(i, iname, "array_write")
        if j < 0:
            raise IndexError("array_write: index '%s' is %d, must be >= 0 (array '%s')" % (iname, j, aname))
        arr = TensorArray(arr or (), getattr(arr, "lods", None))
        if j >= len(arr):
            arr.extend([None] * (j + 1 - len(arr)))
            arr.lods.extend([None] * (j + 1 - len(arr.lods)))
        arr[j] = x
        arr.lods[j] = lod
        return arr

    return k


def _read_shape(ins, attrs):
    a = first(ins, "X")
    return {"Out": OutMeta(a.shape, a.dtype, a.lod_level)}


@defop("read_from_array", inputs=("X", "I"), lod_out=("Out",), infer_shape=_read_shape, no_grad=("I",),
       host="array", operator_base=True)
def read_from_array(op, ctx):
    aname, iname = op.input("X")[0], op.input("I")[0]

    def k(arr, i):
        j = _index(i, iname, "array_read")
        n = 0 if arr is None else len(arr)
        if not 0 <= j < n or arr[j] is None:
            raise IndexError("array_read: index '%s' is %d but array '%s' has %s" %
                             (iname, j, aname, "%d elements" % n if not 0 <= j < n else "no value at it"))
        lods = getattr(arr, "lods", None)
        return arr[j], (lods[j] if lods is not None and j < len(lods) else None)

    return k


@defop("lod_array_length", infer_shape=lambda ins, a: {"Out": OutMeta([1], "int64")}, differentiable=False,
       host="array", operator_base=True)
def lod_array_length(op, ctx):
    dev = ctx.device
    return lambda arr: torch.tensor([0 if arr is None else len(arr)], dtype=torch.int64, device=dev)


def _array_to_tensor_shape(ins, attrs):
    a = first(ins, "X")
    axis, stack = attrs.get("axis", 1), attrs.get("use_stack", False)
    shape = list(a.shape) if a.shape else [-1]
    if stack:
        shape.insert(axis % (len(shape) + 1), -1)
    else:
        shape[axis % len(shape)] = -1
    return {"Out": OutMeta(shape, a.dtype), "OutIndex": OutMeta([-1], "int32")}


# The array's elements concatenated (or stacked) along axis; OutIndex: each element's size along axis.
@defop("tensor_array_to_tensor", outputs=("Out", "OutIndex"), infer_shape=_array_to_tensor_shape,
       host="array", operator_base=True)
def tensor_array_to_tensor(op, ctx):
    axis, stack = attr(op, "axis", 1), bool(attr(op, "use_stack", False))
    aname = op.input("X")[0]

    def k(arr):
        if not arr or any(t is None for t in arr):
            raise ValueError("tensor_array_to_tensor: array '%s' is %s" % (
                aname, "empty" if not arr else "missing element %d" % [t is None for t in arr].index(True)))
        try:
            out = torch.stack(list(arr), axis) if stack else torch.cat(list(arr), axis)
        except RuntimeError as e:
            raise ValueError("tensor_array_to_tensor: the elements of array '%s' (shapes %s) do not %s along "
                             "axis %d: %s" % (aname, [list(t.shape) for t in arr], "stack" if stack else "concat",
                                              axis, e))
        # Paddle reports each element's size along axis, stacked or not (out of range when stacking at the
        # end: 1 here; a negative axis: Paddle reads past its dims, here it counts from the end)
        sizes = [t.shape[axis] if -t.dim() <= axis < t.dim() else 1 for t in arr]
        return out, torch.tensor(sizes, dtype=torch.int32, device=out.device)

    return k


@defop("is_empty", infer_shape=lambda ins, a: {"Out": OutMeta([1], "bool")}, differentiable=False)
def is_empty(op, ctx):
    dev = ctx.device
    return lambda x: torch.full((1,), x.numel() == 0, dtype=torch.bool, device=dev)   # (a fill, not an upload)


# Print: the identity on its input, printing it the first `first_n` runs (-1: every run). The layout is
# ours (Paddle prints from C++ with glog); the facts shown follow the print_tensor_* attributes.
@defop("print", inputs=("In",), infer_shape=same_as("In"), host="print", operator_base=True)
def print_(op, ctx):
    name = op.input("In")[0]
    first_n, summarize = attr(op, "first_n", -1), attr(op, "summarize", 20)
    message = attr(op, "message", "")
    phase = attr(op, "print_phase", "BOTH")
    # Paddle's grad of print is a print too (is_forward False, printing the gradient): each prints in its phase
    shown = ("FORWARD", "BOTH") if attr(op, "is_forward", True) else ("BACKWARD", "BOTH")
    count = [0]

    def k(x):
        if phase in shown and (first_n < 0 or count[0] < first_n):
            count[0] += 1
            flat = x.detach().reshape(-1)
            data = flat if summarize < 0 else flat[:summarize]
            parts = [message] if message else []
            if attr(op, "print_tensor_name", True):
                parts.append("Tensor[%s]" % name)
            if attr(op, "print_tensor_shape", True):
                parts.append("shape: %s" % list(x.shape))
            if attr(op, "print_tensor_type", True):
                parts.append("dtype: %s" % str(x.dtype)[6:])
            parts.append("data: %s" % data.cpu().tolist())
            print("\t".join(parts), flush=True)
        return x

    return k
