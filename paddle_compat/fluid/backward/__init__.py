"""Paddle's fluid.backward: append_backward / gradients record Paddle's grad ops (backward.py); with checkpoints,
the forward section is recomputed in the backward pass (recompute.py, RecomputeOptimizer)."""

from ...ir import is_autograd_op  # noqa: F401
from .backward import NON_DIFFERENTIABLE_OPS, append_backward, calc_gradient, gradients  # noqa: F401
# Paddle's helpers of the same names, which its op tests call
from .backward import (_append_grad_suffix_, _find_no_grad_vars, _find_op_path_, _get_stop_gradients_,  # noqa: F401
                       _strip_grad_suffix_)

__all__ = ["append_backward", "gradients", "calc_gradient", "NON_DIFFERENTIABLE_OPS", "is_autograd_op"]
