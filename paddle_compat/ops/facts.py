"""Gradient facts of the ops defined in the older, kernel-only form (backends/lowering/kernels/).

Ops defined with `ops.defop` state `differentiable=` themselves; only the backend's own kernel-only ops
are listed here.
"""

# Ops whose outputs carry no gradient to their inputs.
NON_DIFFERENTIABLE = frozenset(["feed", "fetch"])
