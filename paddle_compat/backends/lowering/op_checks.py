"""What the lowering refuses before it builds anything, each refusal naming the op type and where it sits
(block and op index): an op type with no kernel here, and a grad op (in a program Paddle wrote, or ours)
whose forward op type has none or carries no gradient here. Autograd computes a region's gradients from the
forward kernels, so a grad op of an unknown type would otherwise be silently answered with zeros or with the
gradient of something else."""

from ...ops import is_differentiable
from . import registry

__all__ = ["kernel_of", "check_grad_ops", "forward_type"]


def forward_type(grad_type):
    """The op type a grad op type differentiates (relu_grad -> relu, tanh_grad_grad -> tanh,
    cross_entropy_grad2 -> cross_entropy2); None for a type that is not a grad op type."""
    if grad_type == "cross_entropy_grad2":     # Paddle's one grad op type that does not end in _grad
        return "cross_entropy2"
    if not grad_type.endswith("_grad"):
        return None
    while grad_type.endswith("_grad"):
        grad_type = grad_type[: -len("_grad")]
    return grad_type


def _where(block, i, op):
    return "block %d op %d (%s)" % (block.idx, i, op.type)


def kernel_of(block, i, op):
    """The OpDef the lowering runs op `i` of `block` with; an unknown type is named with its place."""
    try:
        return registry.get(op.type)
    except NotImplementedError as e:
        raise NotImplementedError("%s: %s" % (_where(block, i, op), e)) from None


def check_grad_ops(block, regions):
    """Every grad op an autograd region covers differentiates an op type this package runs and
    differentiates."""
    for r in regions:
        for i in r.op_idx:
            op = block.ops[i]
            fwd = forward_type(op.type)
            if fwd is None:
                continue        # sum of gradient parts, Paddle's ordinary-typed grad-maker ops
            if fwd not in registry.known_op_types() or registry.get(fwd).factory is None:
                raise NotImplementedError(
                    "%s: grad op of op type '%s', which has no lowering to torch here: its gradient cannot be "
                    "computed (see paddle_compat/ops/)" % (_where(block, i, op), fwd))
            if not is_differentiable(fwd):
                raise NotImplementedError(
                    "%s: grad op of op type '%s', which carries no gradient here" % (_where(block, i, op), fwd))
