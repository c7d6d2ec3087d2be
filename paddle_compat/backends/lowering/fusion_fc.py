"""Lowering-time fusion of fc's two ops: `mul` (a 2-D input times a 2-D weight) followed by the bias
`elementwise_add` becomes one torch.addmm, as torch's Linear computes it: one output tensor and one pass
instead of a product, a second tensor and a pass adding the bias (and on a GPU one launch instead of two).

Like fusion.py this is a plan for the code generator: the Program keeps Paddle's ops. A pair fuses when the
product is read by the add alone (no other op, no fetch, not persistable, its gradient wanted by nobody
outside the backward), the add puts a 1-D bias on the last axis (axis 1 or -1) and the mul is a matrix
product of X flattened after its first dim (x_num_col_dims = y_num_col_dims = 1, a 2-D weight). The sum may round the last
bit differently from the two ops (addmm adds the bias inside the matrix product); parity holds it to Paddle.
Under contrib.mixed_precision a `cast` of the bias may sit between the two ops (_bias_cast): it runs first.
"""

from ...ir import GRAD_SUFFIX, Operator, is_autograd_op, is_recomputed_op

FUSED_FC = "fused_mul_add_bias"


def plan(block, readers, fetch, skip=()):
    """{op index: replacement Operator, or None to skip that op}. readers: var -> indices of the ordinary
    (non-gradient) ops reading it."""
    ops = block.ops
    replace = {}
    for i, op in enumerate(ops):
        if op.type != "mul" or i in skip or is_autograd_op(op) or is_recomputed_op(op) or i + 1 >= len(ops):
            continue
        out = op.output("Out")
        a = i + 1
        if _bias_cast(ops[a], ops[a + 1] if a + 1 < len(ops) else None, op, out):
            a += 1       # mixed precision casts the bias between the two: it runs first, the pair after it
        add = ops[a]
        if add.type != "elementwise_add" or a in skip or is_autograd_op(add) or is_recomputed_op(add) or \
                add.input("X") != out:
            continue
        if op.attrs.get("x_num_col_dims", 1) != 1 or op.attrs.get("y_num_col_dims", 1) != 1:
            continue
        x, w, b = (block._find_var_recursive(n[0]) if len(n) == 1 else None
                   for n in (op.input("X"), op.input("Y"), add.input("Y")))
        out_var = block._find_var_recursive(out[0])
        if None in (x, w, b, out_var) or len(w.shape) != 2 or len(b.shape) != 1:
            continue
        if add.attrs.get("axis", -1) not in (-1, 1) or out_var.persistable or out[0] in fetch:
            continue
        if readers.get(out[0]) != [a] or readers.get(out[0] + GRAD_SUFFIX) or out[0] + GRAD_SUFFIX in fetch:
            continue
        replace[i] = None
        replace[a] = Operator(block, FUSED_FC, inputs={"X": op.input("X"), "Y": op.input("Y"),
                                                           "Bias": add.input("Y")},
                                  outputs={"Out": add.output("Out")}, attrs={"fused_from": "mul + elementwise_add"},
                                  callsite=add.callsite)
    return replace


def _bias_cast(op, nxt, mul, out):
    """contrib.mixed_precision's `cast` of the bias between fc's mul and its add: a cast writing only the add's
    Y, reading neither the product nor writing the mul's inputs, so the product may as well be taken after it."""
    if op.type != "cast" or nxt is None or nxt.type != "elementwise_add" or is_autograd_op(op) or \
            is_recomputed_op(op):
        return False
    written = set(op.output_arg_names)
    return written == set(nxt.input("Y")) and not written & set(mul.input_arg_names) and \
        not set(op.input_arg_names) & set(out)
