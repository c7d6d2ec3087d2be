"""Op facts, above the IR and below both the front end and the backends: one definition per op type.

    from paddle_compat import ops
    ops.get("cumsum").infer_shape(...)   # the builder's output shapes
    ops.get("cumsum").factory            # the kernel factory the lowering calls
    ops.is_differentiable("cumsum")      # what append_backward and autograd regions need

Definitions live in ops/defs/ (new form, `defop`) and, for the backend-specific families,
backends/lowering/kernels/ (older, kernel-only form, `register_kernel`, with grad facts in ops/facts.py).
Op roles and the grad-name convention are IR facts (paddle_compat/ir/roles.py). Importing this package
registers the op table with the IR (ir/op_info.py) and imports no torch.
"""

from ..ir import op_info as _op_info
from . import protos
from .registry import (OpDef, OutMeta, aliased_outputs, attr, defop, find, get, is_differentiable,  # noqa: F401
                       known_op_types, no_grad_slots, register_kernel)

# what the IR asks of an op type (is it declared, its default attributes, proto and shape inference)
_op_info.install(protos)
