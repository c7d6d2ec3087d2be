"""Gradient facts of the ops defined in the older, kernel-only form (backends/lowering/kernels/).

Ops defined with `ops.defop` state `differentiable=` themselves; this list shrinks as op families move
into paddle_compat/ops/defs/.
"""

# Ops whose outputs carry no gradient to their inputs.
NON_DIFFERENTIABLE = frozenset([
    "fill_constant", "fill_constant_batch_size_like", "uniform_random", "gaussian_random",
    "truncated_gaussian_random", "assign_value", "accuracy", "auc",
    "less_than", "less_equal", "greater_than", "greater_equal", "equal", "not_equal", "logical_and",
    "logical_or", "logical_not", "logical_xor", "increment", "fill_zeros_like",
    "fill_any_like", "range", "feed", "fetch", "sign", "floor", "ceil", "round", "elementwise_floordiv",
    "elementwise_mod", "sampling_id", "is_empty", "isfinite", "print",
])
