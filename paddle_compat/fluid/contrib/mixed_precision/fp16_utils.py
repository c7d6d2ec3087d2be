"""Program rewriting for mixed precision, as Paddle 1.8's fluid.contrib.mixed_precision.fp16_utils.

rewrite_program (before the backward pass): each op of the global block is classed white, black or neither
(fp16_lists: white and black by type, gray ops after the ops producing their inputs, unlisted ops black);
a white op gets `cast`s of its float32 inputs to float16 inserted before it (one `<name>.cast_fp16` per
variable, reused by later ops) and its float32 outputs become float16 variables — there is no cast back, the
float16 values flow on into the next ops; a black op gets its float16 inputs cast up (`<name>.cast_fp32`).
Ops classed neither are left alone.

update_role_var_grad (after the backward pass): Paddle moves the casts of the parameters' gradients back to
float32 to the end of the block; ours stay in the backward pass (see there why).

dtype="bfloat16" (our extension; Paddle 1.8 has no bfloat16) does the same with bfloat16 in place of float16
and `.cast_bf16` names.
"""

from ....ir import OP_ROLE_KEY, OpRole, VarType, convert_dtype

__all__ = ["rewrite_program", "update_role_var_grad", "low_precision_dtype", "find_true_prev_op",
           "find_true_post_op"]

_LOW = {"float16": VarType.FP16, "bfloat16": VarType.BF16}
_VALID_TYPES = (VarType.LOD_TENSOR, VarType.SELECTED_ROWS, VarType.LOD_TENSOR_ARRAY)
_SUFFIX = {VarType.FP16: "fp16", VarType.BF16: "bf16"}


def low_precision_dtype(dtype):
    if dtype not in _LOW:
        raise ValueError("mixed precision dtype must be 'float16' or 'bfloat16', got %r" % (dtype,))
    return _LOW[dtype]


def _dtype_to_str(dtype):
    return _SUFFIX.get(dtype, "fp32")


def _slot_order(names):
    # Paddle walks an op's slots in its OpDesc's (sorted) order; each cast is inserted at the op's index, so
    # the casts of the last slot end up first
    return sorted(names)


def _insert_cast_op(block, op, idx, src_dtype, dest_dtype):
    """Casts of op's src_dtype inputs to dest_dtype inserted at idx; with a float32 source (a white op), its
    float32 outputs become dest_dtype. Returns how many casts were inserted."""
    num_cast_ops = 0
    to_low = src_dtype == VarType.FP32
    for slot in _slot_order(op.input_names):
        if to_low and op.type == "batch_norm" and slot != "X":
            continue        # scale, bias, mean and variance stay float32
        for name in op.input(slot):
            in_var = block._find_var_recursive(name)
            if in_var is None or in_var.type not in _VALID_TYPES:
                continue
            if convert_dtype(in_var.dtype) == src_dtype:
                cast_name = name + ".cast_" + _dtype_to_str(dest_dtype)
                out_var = block.vars.get(cast_name)
                if out_var is None or convert_dtype(out_var.dtype) != dest_dtype:
                    # (Paddle gives the copy no shape; ours takes the source's from cast's infer_shape)
                    out_var = block.create_var(name=cast_name, dtype=dest_dtype, lod_level=in_var.lod_level,
                                               persistable=False, stop_gradient=False)
                    block._insert_op(idx, type="cast", inputs={"X": [in_var]}, outputs={"Out": [out_var]},
                                     attrs={"in_dtype": int(convert_dtype(in_var.dtype)),
                                            "out_dtype": int(dest_dtype)})
                    num_cast_ops += 1
                op._rename_input(name, cast_name)
                op._rename_output(name, cast_name)
            elif op.has_attr("in_dtype"):
                op._set_attr("in_dtype", int(dest_dtype))
    if to_low:
        for slot in op.output_names:
            if op.type == "batch_norm" and slot != "Y":
                continue
            for name in op.output(slot):
                out_var = block._find_var_recursive(name)
                if out_var is None or out_var.type not in _VALID_TYPES:
                    continue
                if convert_dtype(out_var.dtype) == VarType.FP32:
                    out_var.dtype = dest_dtype
                    if op.has_attr("out_dtype"):
                        op._set_attr("out_dtype", int(dest_dtype))
    return num_cast_ops


def _writes(op, name):
    return name in op.output_arg_names


def find_true_prev_op(ops, cur_op, var_name):
    """The one op before cur_op that writes var_name (None if none; more than one is an error, as in Paddle)."""
    prev = []
    for op in ops:
        if op is cur_op:
            break
        if _writes(op, var_name):
            prev.append(op)
    if len(prev) > 1:
        raise ValueError("There must be only one previous op that outputs {0} variable".format(var_name))
    return prev[0] if prev else None


def find_true_post_op(ops, cur_op, var_name):
    """The ops after cur_op that read var_name, or None."""
    post, seen = [], False
    for op in ops:
        if seen and var_name in op.input_arg_names:
            post.append(op)
        seen = seen or op is cur_op
    return post or None


def _is_in_black_varnames(op, amp_lists):
    return any(n in amp_lists.black_varnames for n in op.input_arg_names + op.output_arg_names)


def _producer(block, ops, op, name):
    """The op Paddle's `var.op` names for an input of op: the last op built with the variable as an output;
    when that is op itself (an in-place op), the one op before it writing the variable."""
    v = block._find_var_recursive(name)
    prev = getattr(v, "op", None) if v is not None else None
    if prev is None:
        return None
    if prev is op:
        return find_true_prev_op(ops, op, name)
    return prev


def _classify(block, amp_lists):
    ops = block.ops
    white, black = set(), set()
    for op in ops:
        if amp_lists.black_varnames is not None and _is_in_black_varnames(op, amp_lists):
            black.add(id(op))
        elif op.type in amp_lists.black_list:
            black.add(id(op))
        elif op.type in amp_lists.white_list:
            white.add(id(op))
        elif op.type in amp_lists.gray_list:
            is_black = is_white = False
            for name in op.input_arg_names:
                prev = _producer(block, ops, op, name)
                if prev is None:
                    continue
                if id(prev) in black or prev.type in amp_lists.black_list:
                    is_black = True
                elif id(prev) in white or prev.type in amp_lists.white_list:
                    is_white = True
            if is_black:
                black.add(id(op))
            elif is_white:
                white.add(id(op))
        else:
            black.add(id(op))
    return white, black


def rewrite_program(main_prog, amp_lists, dtype="float16"):
    """Insert the casts into main_prog's global block, in place (before append_backward, as Paddle does)."""
    low = low_precision_dtype(dtype)
    block = main_prog.global_block()
    white, black = _classify(block, amp_lists)
    idx = 0
    while idx < len(block.ops):
        op = block.ops[idx]
        n = 0
        if id(op) in black:
            n = _insert_cast_op(block, op, idx, low, VarType.FP32)
        elif id(op) in white:
            n = _insert_cast_op(block, op, idx, VarType.FP32, low)
        idx += n + 1
    main_prog._bump()
    return main_prog


def _last_writer(block, name):
    for op in reversed(block.ops):
        if _writes(op, name):
            return op
    return None


def update_role_var_grad(main_prog, params_grads):
    """Checks the float32 casts of the parameters' gradients as Paddle 1.8 does (backward role, read by no
    later non-optimize op) and leaves them where they are.

    Where we differ from Paddle on purpose: Paddle moves each such cast to the end of the block (Optimize
    role) and gives op_role_var to the op making the float16 gradient, so its multi-GPU allreduce carries
    float16 gradients. Ours stays a cast_grad of the backward pass: the whole backward pass is one torch
    autograd call from the parameters, and the parameter (not its float16 copy) must be what it
    differentiates; our data-parallel reduction then carries the float32 gradients.
    """
    block = main_prog.global_block()
    for _, g in params_grads:
        op = _last_writer(block, g.name)
        if op is None or convert_dtype(g.dtype) != VarType.FP32 or op.type != "cast_grad":
            continue
        if not int(op.attrs.get(OP_ROLE_KEY, 0)) & int(OpRole.Backward):
            raise ValueError("The cast op {0} must be in BACKWARD role and have op_role_var attr.".format(op))
        post = [o for o in (find_true_post_op(block.ops, op, g.name) or ())
                if not int(o.attrs.get(OP_ROLE_KEY, 0)) & int(OpRole.Optimize)]
        if post:
            raise ValueError("The cast op {0}'s output should not be used by a non-optimize op, however, it is "
                             "used by {1}".format(op, post[0]))
