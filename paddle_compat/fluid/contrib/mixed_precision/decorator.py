"""decorate(optimizer): mixed-precision training with loss scaling (Paddle 1.8's OptimizerWithMixedPrecision).

minimize(loss):
  1. rewrite the forward pass: white-list ops (matmul, mul, conv2d) run in float16 or bfloat16 (fp16_utils);
  2. scaled_loss = loss * loss_scaling; append_backward(scaled_loss);
  3. check_finite_and_unscale: gradients / loss_scaling, and whether any is inf/nan;
  4. with dynamic loss scaling, update_loss_scaling: after incr_every_n_steps finite steps the scaling grows by
     incr_ratio; after decr_every_n_nan_or_inf bad steps it shrinks by decr_ratio (not below 1); a bad step's
     gradients are zeroed, so the optimizer leaves the parameters as they are;
  5. the wrapped optimizer's update.
Paddle 1.8 runs float16 only on GPU; on torch, `dtype="bfloat16"` (an addition: Paddle 1.8 has no bf16) also
works on CPU. Loss scaling matters for float16; with bfloat16 (float32's range) init_loss_scaling=1.0 and
use_dynamic_loss_scaling=False are the usual choice.
"""

from ....ir import name_scope, unique_name
from ... import layers
from ...backward.backward import append_backward
from ....ir import default_main_program, default_startup_program, program_guard
from .fp16_lists import AutoMixedPrecisionLists
from .fp16_utils import low_precision_dtype, rewrite_program

__all__ = ["decorate", "OptimizerWithMixedPrecision"]


class OptimizerWithMixedPrecision:
    def __init__(self, optimizer, amp_lists, init_loss_scaling, use_dynamic_loss_scaling, incr_every_n_steps,
                 decr_every_n_nan_or_inf, incr_ratio, decr_ratio, dtype="float16"):
        low_precision_dtype(dtype)     # checks the name
        if incr_every_n_steps < 1 or decr_every_n_nan_or_inf < 1:
            raise ValueError("incr_every_n_steps and decr_every_n_nan_or_inf must be >= 1, got %r and %r"
                             % (incr_every_n_steps, decr_every_n_nan_or_inf))
        if incr_ratio <= 1.0 or not 0.0 < decr_ratio < 1.0:
            raise ValueError("need incr_ratio > 1 and 0 < decr_ratio < 1, got %r and %r" % (incr_ratio, decr_ratio))
        self._optimizer = optimizer
        self._amp_lists = amp_lists
        self._dtype = dtype
        self._param_grads = None
        self._train_program = default_main_program()
        self._startup_prog = default_startup_program()
        self._scaled_loss = None
        self._init_loss_scaling = float(init_loss_scaling)
        self._use_dynamic_loss_scaling = use_dynamic_loss_scaling
        self._incr_every_n_steps = int(incr_every_n_steps)
        self._decr_every_n_nan_or_inf = int(decr_every_n_nan_or_inf)
        self._incr_ratio, self._decr_ratio = float(incr_ratio), float(decr_ratio)
        self._loss_scaling = None
        self._num_good_steps = self._num_bad_steps = None

    def _create_state(self):
        self._loss_scaling = layers.create_global_var(name=unique_name.generate("loss_scaling"), shape=[1],
                                                      value=self._init_loss_scaling, dtype="float32",
                                                      persistable=True)
        if self._use_dynamic_loss_scaling:
            self._num_good_steps = layers.create_global_var(name=unique_name.generate("num_good_steps"),
                                                            shape=[1], value=0, dtype="int32", persistable=True)
            self._num_bad_steps = layers.create_global_var(name=unique_name.generate("num_bad_steps"),
                                                           shape=[1], value=0, dtype="int32", persistable=True)

    def get_loss_scaling(self):
        """The loss-scaling variable (fetch it to watch it change)."""
        return self._loss_scaling

    def get_scaled_loss(self):
        """loss * loss_scaling, the variable backward starts from."""
        return self._scaled_loss

    def backward(self, loss, startup_program=None, parameter_list=None, no_grad_set=None, callbacks=None):
        self._train_program = loss.block.program
        with program_guard(self._train_program, startup_program or self._startup_prog):
            if self._loss_scaling is None:
                self._create_state()
            rewrite_program(self._train_program, self._amp_lists, self._dtype)
            self._scaled_loss = loss * self._loss_scaling
            self._param_grads = append_backward(self._scaled_loss, parameter_list, no_grad_set, callbacks)
        return self._param_grads

    def apply_gradients(self, params_grads):
        """Unscale (and with dynamic scaling, check and update the scaling), then the optimizer's update."""
        pgs = [(p, g) for p, g in params_grads if g is not None]
        block = default_main_program().global_block()
        grads = [g for _, g in pgs]
        with default_main_program()._optimized_guard(grads), name_scope("mixed_precision"):
            unscaled = [block.create_var(name=unique_name.generate(g.name + "_unscaled"), shape=g.shape,
                                         dtype=g.dtype, stop_gradient=True) for g in grads]
            found = block.create_var(name=unique_name.generate("find_infinite_scale"), shape=[1], dtype="bool",
                                     stop_gradient=True)
            block.append_op(type="check_finite_and_unscale", inputs={"X": grads, "Scale": [self._loss_scaling]},
                            outputs={"Out": unscaled, "FoundInfinite": [found]})
            if self._use_dynamic_loss_scaling:
                block.append_op(
                    type="update_loss_scaling",
                    inputs={"X": unscaled, "FoundInfinite": [found], "PrevLossScaling": [self._loss_scaling],
                            "InGoodSteps": [self._num_good_steps], "InBadSteps": [self._num_bad_steps]},
                    outputs={"Out": unscaled, "LossScaling": [self._loss_scaling],
                             "OutGoodSteps": [self._num_good_steps], "OutBadSteps": [self._num_bad_steps]},
                    attrs={"incr_every_n_steps": self._incr_every_n_steps,
                           "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
                           "incr_ratio": self._incr_ratio, "decr_ratio": self._decr_ratio})
        return self._optimizer.apply_gradients([(p, u) for (p, _), u in zip(pgs, unscaled)])

    def apply_optimize(self, loss, startup_program, params_grads):
        with program_guard(loss.block.program, startup_program or self._startup_prog):
            return self.apply_gradients(params_grads)

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
        with program_guard(loss.block.program, startup_program or self._startup_prog):
            optimize_ops = self.apply_gradients(params_grads)
        return optimize_ops, params_grads


def decorate(optimizer, amp_lists=None, init_loss_scaling=1.0, incr_every_n_steps=1000, decr_every_n_nan_or_inf=2,
             incr_ratio=2.0, decr_ratio=0.8, use_dynamic_loss_scaling=True, dtype="float16"):
    """Wrap `optimizer` for mixed-precision training (Paddle 1.8's signature; `dtype` is an addition)."""
    return OptimizerWithMixedPrecision(optimizer, amp_lists or AutoMixedPrecisionLists(), init_loss_scaling,
                                       use_dynamic_loss_scaling, incr_every_n_steps, decr_every_n_nan_or_inf,
                                       incr_ratio, decr_ratio, dtype)
