"""While, while_loop, cond, case, switch_case, Switch, tensor arrays, Print (Paddle's fluid.layers.control_flow)."""

import functools

from ....ir import OP_ROLE_KEY, OpRole, VarType, Variable, convert_dtype
from ...layer_helper import LayerHelper
from ..arg_checks import check_variable_and_dtype
from ..nn.math import logical_and, logical_not
from ..tensor import assign, cast, fill_constant
from ..utils import check_array, append_defined, check_variable, single
from .compare import equal

__all__ = ["While", "while_loop", "ConditionalBlock", "cond", "case", "switch_case", "Switch", "select_input",
           "create_array", "array_write", "array_read", "array_length", "is_empty", "Print"]


def _check_bool(v, arg, layer):
    check_variable(v, arg, layer)
    if convert_dtype(v.dtype) != VarType.BOOL:
        raise TypeError("%s: '%s' (%s) must be a bool variable, got dtype %s" % (layer, arg, v.name, v.dtype))


def _check_scalar(v, arg, layer):
    n = 1
    for d in v.shape:
        n *= d
    if n != 1:
        raise TypeError("%s: '%s' (%s) must hold one element (shape [1]), got shape %s"
                        % (layer, arg, v.name, list(v.shape)))


class _SubBlock:
    """`with`: builds ops into a new sub-block of the current block, then `complete(block)` appends
    the op owning it to the parent block."""

    def __init__(self, program, complete):
        self.program = program
        self.complete = complete

    def __enter__(self):
        self.program._create_block()

    def __exit__(self, exc_type, exc_val, exc_tb):
        block = self.program.current_block()
        try:
            if exc_type is None:
                self.complete(block)
        finally:
            self.program._rollback()
        return False


def _reads_and_writes(block, written=()):
    """Outer names the body reads before writing them (in order), and every name it writes."""
    reads, writes = [], list(written)
    for op in block.ops:
        for n in op.input_arg_names:
            if n not in writes and n not in reads:
                reads.append(n)
        for n in op.output_arg_names:
            if n not in writes:
                writes.append(n)
    return reads, writes


def _outer_vars(parent, names):
    return [v for v in (parent._find_var_recursive(n) for n in names) if v is not None]


class While:
    """Repeat the body while `cond` (a bool variable of one element) holds; the body updates it,
    e.g. with `less_than(i, n, cond=cond)`."""

    BEFORE_WHILE_BLOCK, IN_WHILE_BLOCK, AFTER_WHILE_BLOCK = 0, 1, 2

    def __init__(self, cond, is_test=False, name=None):
        self.helper = LayerHelper("while", name=name)
        self.status = While.BEFORE_WHILE_BLOCK
        _check_bool(cond, "cond", "While")
        _check_scalar(cond, "cond", "While")
        self.cond_var = cond
        self.is_test = is_test

    def block(self):
        return _SubBlock(self.helper.main_program, self._complete)

    def _complete(self, body):
        parent = self.helper.main_program.block(body.parent_idx)
        reads, writes = _reads_and_writes(body, [self.cond_var.name])
        step_scopes = parent.create_var(type=VarType.STEP_SCOPES,
                                        name=self.helper.name + ".step_scopes")
        parent.append_op(type="while",
                         inputs={"X": _outer_vars(parent, reads), "Condition": [self.cond_var]},
                         outputs={"Out": _outer_vars(parent, writes), "StepScopes": [step_scopes]},
                         attrs={"sub_block": body, "is_test": self.is_test})
        self.status = While.AFTER_WHILE_BLOCK


def while_loop(cond, body, loop_vars, is_test=False, name=None):
    """Paddle 1.8's while_loop: a While whose body assigns body(*loop_vars) back to loop_vars (arrays are
    updated in place, so they are not assigned) and re-evaluates cond."""
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callable, got %s and %s"
                        % (type(cond).__name__, type(body).__name__))
    if not isinstance(loop_vars, (list, tuple)) or not loop_vars:
        raise ValueError("while_loop: loop_vars must be a non-empty list or tuple of Variables")
    pre_cond = cond(*loop_vars)
    _check_bool(pre_cond, "the value returned by cond", "while_loop")
    loop = While(pre_cond, is_test, name)
    with loop.block():
        outs = body(*loop_vars)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        if len(outs) != len(loop_vars):
            raise ValueError("body in while_loop should return the same arity (length and structure) and types "
                             "as loop_vars: got %d values for %d loop_vars" % (len(outs), len(loop_vars)))
        now_cond = cond(*outs)
        for o, v in zip(outs, loop_vars):
            if not (isinstance(o, Variable) and o.type == VarType.LOD_TENSOR_ARRAY):
                assign(o, v)
        assign(now_cond, pre_cond)
    return loop_vars


class ConditionalBlock:
    """Runs its body when `inputs` hold: with is_scalar_condition, inputs[0] is a bool of one element."""

    def __init__(self, inputs, is_scalar_condition=False, name=None):
        for v in inputs:
            check_variable(v, "inputs", "ConditionalBlock")
        self.inputs = list(inputs)
        self.is_scalar_condition = is_scalar_condition
        self.helper = LayerHelper("conditional_block", name=name)

    def block(self):
        return _SubBlock(self.helper.main_program, self.complete)

    def complete(self, body=None):
        body = body or self.helper.main_program.current_block()
        parent = self.helper.main_program.block(body.parent_idx)
        reads, writes = _reads_and_writes(body)
        scope = parent.create_var(type=VarType.STEP_SCOPES, name=self.helper.name + ".scope")
        parent.append_op(type="conditional_block",
                         inputs={"Cond": self.inputs, "Input": [parent._var_recursive(n) for n in reads]},
                         outputs={"Out": _outer_vars(parent, writes), "Scope": [scope]},
                         attrs={"sub_block": body, "is_scalar_condition": self.is_scalar_condition})
        if body.backward_block_idx >= 0:
            self._append_grad(parent, body, scope)

    def _append_grad(self, parent, body, scope):
        """minimize/append_backward ran inside the body, so its grad ops (and optimizer ops) sit in the
        body's backward block: run that block, when the body ran, right after it (Paddle appends this
        conditional_block_grad by hand too). Input: the outer variables the backward block reads; the
        gradients stay in that block, where the optimizer ops read them (Paddle also lists Out, Out@GRAD
        and Input@GRAD, which nothing reads here)."""
        grad_block = self.helper.main_program.block(body.backward_block_idx)
        made, outer = set(), []
        for op in grad_block.ops:
            for n in op.input_arg_names:
                if n not in made and n not in outer and parent._find_var_recursive(n) is not None:
                    outer.append(n)
            made.update(op.output_arg_names)
        parent.append_op(type="conditional_block_grad",
                         inputs={"Cond": self.inputs, "Input": [parent._var_recursive(n) for n in outer],
                                 "Scope": [scope]},
                         attrs={"sub_block": grad_block, "is_scalar_condition": self.is_scalar_condition,
                                OP_ROLE_KEY: OpRole.Backward})


def _map(fn, *structs):
    s = structs[0]
    if isinstance(s, (list, tuple)):
        for o in structs[1:]:
            if not isinstance(o, (list, tuple)) or len(o) != len(s):
                raise ValueError("Incompatible return values of true_fn and false_fn in cond: %r and %r"
                                 % (s, o))
        return type(s)(_map(fn, *parts) for parts in zip(*structs))
    return fn(*structs)


def _copy_to_parent(var):
    if var is None:
        return None
    check_variable(var, "branch output", "cond")
    prog = var.block.program
    parent = prog.block(prog.current_block().parent_idx)
    out = parent.create_var(name=LayerHelper("cond").name + ".out", dtype=var.dtype, shape=var.shape,
                            type=var.type, lod_level=var.lod_level)
    assign(var, out)
    return out


def _branch(pred, fn, what):
    if not callable(fn):
        raise TypeError("The %s in cond must be callable, but received %s" % (what, type(fn).__name__))
    block = ConditionalBlock([pred], is_scalar_condition=True)
    result = [None]
    with block.block():
        r = fn()
        if r is not None:
            result[0] = _map(_copy_to_parent, r)
    return result[0]


def cond(pred, true_fn=None, false_fn=None, name=None):
    """Paddle 1.8's cond: one conditional_block per branch (the false one on logical_not(pred)), the
    outputs joined with select_input on cast(pred, int32)."""
    _check_bool(pred, "pred", "fluid.layers.cond")
    _check_scalar(pred, "pred", "fluid.layers.cond")
    true_out = _branch(pred, true_fn, "true_fn") if true_fn is not None else None
    false_out = _branch(logical_not(pred), false_fn, "false_fn") if false_fn is not None else None
    if true_out is None and false_out is None:
        return None
    if true_out is None or false_out is None:
        raise ValueError("Incompatible return values of true_fn and false_fn in cond: true_fn returns %s while "
                         "false_fn returns %s" % ("None" if true_out is None else "non-None",
                                                  "None" if false_out is None else "non-None"))
    mask = cast(pred, "int32")
    return _map(lambda f, t: select_input([f, t], mask), false_out, true_out)


def case(pred_fn_pairs, default=None, name=None):
    if not isinstance(pred_fn_pairs, (list, tuple)) or not pred_fn_pairs:
        raise TypeError("case: pred_fn_pairs must be a non-empty list of (pred, fn) tuples")
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError("case: each item of pred_fn_pairs must be a (pred, fn) tuple, got %r" % (pair,))
        if not isinstance(pair[0], Variable) or not callable(pair[1]):
            raise TypeError("case: each item of pred_fn_pairs must be (bool Variable, callable), got %r"
                            % (pair,))
    pairs = list(pred_fn_pairs)
    if default is None:
        default = pairs.pop()[1]
    elif not callable(default):
        raise TypeError("The default in Op(case) must be callable.")
    fn = default
    for pred, true_fn in reversed(pairs):
        fn = functools.partial(cond, pred=pred, true_fn=true_fn, false_fn=fn)
    return fn()


def switch_case(branch_index, branch_fns, default=None, name=None):
    check_variable_and_dtype(branch_index, "branch_index", ("uint8", "int32", "int64"), "switch_case")
    if convert_dtype(branch_index.dtype) != VarType.INT64:
        branch_index = cast(branch_index, "int64")
    if isinstance(branch_fns, dict):
        branch_fns = list(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)) and all(callable(f) for f in branch_fns):
        branch_fns = list(enumerate(branch_fns))
    else:
        branch_fns = list(branch_fns)
    keys = []
    for pair in branch_fns:
        if not isinstance(pair, tuple) or len(pair) != 2 or not isinstance(pair[0], int) or not callable(pair[1]):
            raise TypeError("switch_case: branch_fns items must be (int, callable), got %r" % (pair,))
        if pair[0] in keys:
            raise ValueError("The key in 'branch_fns' must be unique, but '%d' appears more than once." % pair[0])
        keys.append(pair[0])
    branch_fns = sorted(branch_fns, key=lambda p: p[0])
    if default is None:
        default = branch_fns.pop()[1]
    elif not callable(default):
        raise TypeError("The default in Op(switch_case) must be callable.")
    pairs = [(equal(branch_index, fill_constant([1], "int64", k)), fn) for k, fn in branch_fns]
    fn = default
    for pred, true_fn in pairs:
        fn = functools.partial(cond, pred=pred, true_fn=true_fn, false_fn=fn)
    return fn()


class Switch:
    """`with Switch() as s: with s.case(c1): ... with s.default(): ...` -- one conditional_block per case,
    each on "this condition and none before" (Paddle's form)."""

    def __init__(self, name=None):
        self.helper = LayerHelper("switch", name=name)
        self.inside_scope = False
        self.pre_not_conditions = []

    def case(self, condition):
        if not self.inside_scope:
            raise ValueError("case should be called inside with")
        _check_bool(condition, "condition", "Switch.case")
        if not self.pre_not_conditions:
            block = ConditionalBlock([condition], is_scalar_condition=True)
            self.pre_not_conditions.append(logical_not(condition))
        else:
            pre = self.pre_not_conditions[-1]
            self.pre_not_conditions.append(logical_and(pre, logical_not(condition)))
            block = ConditionalBlock([logical_and(pre, condition)], is_scalar_condition=True)
        return block.block()

    def default(self):
        if not self.pre_not_conditions:
            raise ValueError("there should be at least one condition")
        return ConditionalBlock([self.pre_not_conditions[-1]], is_scalar_condition=True).block()

    def __enter__(self):
        self.inside_scope = True
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.inside_scope = False
        return False


def select_input(inputs, mask):
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("select_input: inputs must be a non-empty list of Variables")
    check_variable(mask, "mask", "select_input")
    return single(append_defined("select_input", {"X": list(inputs), "Mask": mask}))


def create_array(dtype):
    helper = LayerHelper("array")
    return helper.create_variable(name="%s.out" % helper.name, type=VarType.LOD_TENSOR_ARRAY, dtype=dtype)


def _check_index(i, layer):
    check_variable(i, "i", layer)
    if convert_dtype(i.dtype) != VarType.INT64:
        raise TypeError("%s: index '%s' must be int64, got %s" % (layer, i.name, i.dtype))


def array_write(x, i, array=None):
    check_variable(x, "x", "array_write")
    _check_index(i, "array_write")
    helper = LayerHelper("array_write")
    if array is None:
        array = helper.create_variable(name="%s.out" % helper.name, type=VarType.LOD_TENSOR_ARRAY,
                                       dtype=x.dtype)
    check_array(array, "array_write")
    if not array.shape:   # the element shape, for what array_read builds
        array.shape, array.lod_level = tuple(x.shape), x.lod_level
    helper.append_op(type="write_to_array", inputs={"X": [x], "I": [i]}, outputs={"Out": [array]})
    return array


def array_read(array, i):
    check_array(array, "array_read")
    _check_index(i, "array_read")
    return single(append_defined("read_from_array", {"X": array, "I": i}))


def array_length(array):
    check_array(array, "array_length")
    return single(append_defined("lod_array_length", {"X": array}, stop_gradient=True))


def is_empty(x, cond=None):
    check_variable(x, "x", "is_empty")
    if cond is None:
        return single(append_defined("is_empty", {"X": x}, stop_gradient=True))
    _check_bool(cond, "cond", "is_empty")
    LayerHelper("is_empty").append_op(type="is_empty", inputs={"X": [x]}, outputs={"Out": [cond]})
    return cond


def Print(input, first_n=-1, message=None, summarize=20, print_tensor_name=True, print_tensor_type=True,
          print_tensor_shape=True, print_tensor_lod=True, print_phase="both"):
    check_variable_and_dtype(input, "input", ["float32", "float64", "int32", "int64", "bool"], "fluid.layers.Print")
    if print_phase.lower() not in ("forward", "backward", "both"):
        raise ValueError("Print: print_phase must be 'forward', 'backward' or 'both', got %r" % (print_phase,))
    attrs = {"first_n": first_n, "summarize": summarize, "message": message or "",
             "print_tensor_name": print_tensor_name, "print_tensor_type": print_tensor_type,
             "print_tensor_shape": print_tensor_shape, "print_tensor_lod": print_tensor_lod,
             "print_phase": print_phase.upper()}
    return single(append_defined("print", {"In": input}, attrs=attrs, name="print_" + input.name))
