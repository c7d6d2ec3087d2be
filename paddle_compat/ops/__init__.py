"""Op facts, above the IR and below both the front end and the backends: one definition per op type.

    from paddle_compat import ops
    ops.get("cumsum").infer_shape(...)   # the builder's output shapes
    ops.get("cumsum").factory            # the kernel factory the lowering calls
    ops.is_differentiable("cumsum")      # what append_backward and autograd regions need

Every op type is declared once, in ops/defs/: `defop` over its kernel factory, or `declare` where a backend
owns the kernel (backends/lowering/kernels/ registers it with `kernel`, only for a declared type). Every other
fact of an op is a field of its declaration too, read with `ops.info`: `ops.info("scale").row_wise` (distributed),
`ops.info("reshape2").reads_on_host("Shape")` (capture), ... (the fields: OpDef; how to add an op:
docs/internals.md, "Adding an op").
Op roles and the grad-name convention are IR facts (paddle_compat/ir/roles.py). Importing this package
registers the op table with the IR (ir/op_info.py) and imports no torch.
"""

from ..ir import op_info as _op_info
from . import protos
from .registry import (HOST_REASONS, OpDef, OutMeta, aliased_outputs, attr, declare, defop, find, get,  # noqa: F401
                       info, is_differentiable, kernel, known_op_types, no_grad_slots)

# what the IR asks of an op type (is it declared, its default attributes, proto and shape inference)
_op_info.install(protos)
