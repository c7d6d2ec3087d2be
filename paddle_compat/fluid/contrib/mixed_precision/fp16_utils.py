"""Program rewriting for mixed precision: cast ops around the white-list ops of the forward pass.

Each white op reads float16/bfloat16 copies of its float32 inputs and writes a low-precision output that a
`cast` turns back into the original float32 variable, so the rest of the program (and the gradients, through
cast_grad) stays float32 — the semantics of torch.autocast for those ops, written into the program.
"""

from ....ir import OP_ROLE_KEY, OpRole, VarType, convert_dtype

__all__ = ["rewrite_program", "low_precision_dtype"]

_LOW = {"float16": VarType.FP16, "bfloat16": VarType.BF16}


def low_precision_dtype(dtype):
    if dtype not in _LOW:
        raise ValueError("mixed precision dtype must be 'float16' or 'bfloat16', got %r" % (dtype,))
    return _LOW[dtype]


def _cast_op(block, idx, src, dst):
    block._insert_op(idx, type="cast", inputs={"X": [src]}, outputs={"Out": [dst]},
                     attrs={"in_dtype": int(convert_dtype(src.dtype)), "out_dtype": int(convert_dtype(dst.dtype)),
                            OP_ROLE_KEY: OpRole.Forward})


def rewrite_program(main_prog, amp_lists, dtype="float16"):
    """Insert the casts in main_prog's global block (in place, before append_backward, as Paddle does)."""
    low = low_precision_dtype(dtype)
    block = main_prog.global_block()
    suffix = ".cast_" + ("fp16" if dtype == "float16" else "bf16")
    i = 0
    while i < len(block.ops):
        op = block.ops[i]
        role = op.attrs.get(OP_ROLE_KEY, 0)
        if op.type not in amp_lists.white_list or role & (OpRole.Backward | OpRole.Optimize):
            i += 1
            continue
        n_before = 0
        for name in list(op.input_arg_names):
            v = block._find_var_recursive(name)
            if v is None or convert_dtype(v.dtype) != VarType.FP32:
                continue
            low_name = name + suffix
            if not block.has_var(low_name):
                lv = block.create_var(name=low_name, shape=v.shape, dtype=low, lod_level=v.lod_level,
                                      persistable=False, stop_gradient=v.stop_gradient)
                _cast_op(block, i, v, lv)
                n_before += 1
            op._rename_input(name, low_name)
        i += n_before
        n_after = 0
        for name in list(op.output_arg_names):
            v = block._find_var_recursive(name)
            if v is None or convert_dtype(v.dtype) != VarType.FP32:
                continue
            low_name = name + suffix
            lv = block.create_var(name=low_name, shape=v.shape, dtype=low, lod_level=v.lod_level,
                                  persistable=False, stop_gradient=v.stop_gradient)
            op._rename_output(name, low_name)
            n_after += 1
            _cast_op(block, i + n_after, lv, v)
        i += 1 + n_after
    main_prog._bump()
    return main_prog
