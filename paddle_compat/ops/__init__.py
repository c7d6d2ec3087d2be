"""Op facts, below both the front end and the backends: one definition per op type.

    from paddle_compat import ops
    ops.get("cumsum").infer_shape(...)   # the builder's output shapes
    ops.get("cumsum").factory            # the kernel factory the lowering calls
    ops.is_differentiable("cumsum")      # what append_backward and autograd regions need

Op roles, the grad-name suffix and `is_autograd_op` live in ops/roles.py.
Definitions live in ops/defs/ (new form, `defop`) and, for the backend-specific families,
backends/lowering/kernels/ (older, kernel-only form, `register_kernel`, with grad facts in ops/facts.py).
Importing this package imports no torch.
"""

from .registry import (OpDef, OutMeta, aliased_outputs, attr, defop, find, get, is_differentiable,  # noqa: F401
                       known_op_types, no_grad_slots, register_kernel)
