"""fluid.core's queries of the C++ op registry that Paddle's OpTest harness (op_test.py) asks:
_get_all_register_op_kernels, has_grad_op_maker, has_infer_inplace, get_grad_op_desc, op_support_gpu,
is_float16_supported.

The kernel table and the grad-maker set are Paddle 1.8.5's CPU build's (paddle_compat/ops/op_registry.json,
recorded by tests/data/paddle18/make_op_registry.py): op_test.py decides from them whether a test must check
gradients, so they answer as Paddle does. has_infer_inplace differs on purpose: this package has no in-place
memory-reuse pass (outputs never share an input's buffer), so no op has an in-place inference and it answers
False; OpTest's in-place consistency check then has nothing to compare.
"""

import json
import os

from ..ir import Program, grad_var_name, is_compiled_with_cuda

_PLAIN = "data_type[%s]:data_layout[ANY_LAYOUT]:place[CPUPlace]:library_type[PLAIN]"
_TABLE = None


def _table():
    global _TABLE
    if _TABLE is None:
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ops", "op_registry.json")
        with open(path) as f:
            t = json.load(f)
        t["grad_op_maker"] = frozenset(t["grad_op_maker"])
        _TABLE = t
    return _TABLE


def _get_all_register_op_kernels():
    """{op type: [kernel key, ...]} as Paddle 1.8.5's CPU build registers them."""
    t = _table()
    out = {op: [_PLAIN % d for d in dtypes] for op, dtypes in t["kernels"].items()}
    for op, keys in t["other_kernels"].items():
        out.setdefault(op, []).extend(keys)
    return out


def has_grad_op_maker(op_type):
    return op_type in _table()["grad_op_maker"]


def has_infer_inplace(op_type):
    return False    # no in-place memory reuse here (see the module docstring)


def get_grad_op_desc(op_desc, no_grad_set, grad_sub_block_list):
    """The grad op Paddle's default maker makes for `op_desc` (`<type>_grad` reading the forward inputs,
    outputs and output gradients, writing the input gradients not in no_grad_set), as OpDescs in a scratch
    block, with {grad var: forward var}; ([], {}) for an op without a gradient (an optimizer update)."""
    op_type = op_desc.type()
    t = _table()
    grad_type = op_type + "_grad"
    if not has_grad_op_maker(op_type) or (grad_type not in t["kernels"] and grad_type not in t["other_kernels"]):
        return [], {}     # Paddle's maker makes nothing (an optimizer update, a metric)
    block = Program().global_block()
    grad_to_var = {}
    inputs = {n: list(op_desc.input(n)) for n in op_desc.input_names()}
    inputs.update({n: list(op_desc.output(n)) for n in op_desc.output_names()})
    for n in op_desc.output_names():
        inputs[grad_var_name(n)] = [grad_var_name(a) for a in op_desc.output(n)]
        grad_to_var.update({grad_var_name(a): a for a in op_desc.output(n)})
    outputs = {}
    for n in op_desc.input_names():
        args = [a for a in op_desc.input(n) if a not in no_grad_set]
        outputs[grad_var_name(n)] = [grad_var_name(a) for a in args]
        grad_to_var.update({grad_var_name(a): a for a in args})
    desc = block.desc.append_op()
    desc.set_type(grad_type)
    for n, args in inputs.items():
        desc.set_input(n, args)
    for n, args in outputs.items():
        desc.set_output(n, args)
    return [desc], grad_to_var


def op_support_gpu(op_type):
    return is_compiled_with_cuda() and op_type in _table()["kernels"]


def is_float16_supported(place):
    return is_compiled_with_cuda() and type(place).__name__ == "CUDAPlace"
