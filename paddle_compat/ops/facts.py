"""Gradient facts of the ops defined in the older, kernel-only form (backends/lowering/kernels/).

Ops defined with `ops.defop` state `differentiable=` themselves; this list shrinks as op families move
into paddle_compat/ops/defs/.
"""

# Ops whose outputs carry no gradient to their inputs.
NON_DIFFERENTIABLE = frozenset(["accuracy", "feed", "fetch"])
