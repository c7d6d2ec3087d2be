"""decorate(optimizer): mixed-precision training with loss scaling (Paddle 1.8's OptimizerWithMixedPrecision).

The program is Paddle 1.8.5's, op for op, up to the loss-scaling update:
  decorate():   loss_scaling (and with dynamic scaling num_good_steps, num_bad_steps) persistable variables, two
                fill_constant ops (incr_every_n_steps, decr_every_n_nan_or_inf), a float32 learning-rate
                variable when the optimizer's learning rate is a number;
  backward():   rewrite_program (casts, float16 white ops), scaled_loss = loss * loss_scaling, the wrapped
                optimizer's backward, update_role_var_grad, and each gradient divided by loss_scaling
                (elementwise_div, Optimize role); returns [[param, unscaled grad], ...];
  apply_gradients(): with dynamic scaling reduce_sum of each gradient, concat, reduce_sum, isfinite (a step
                whose gradient sum is not finite is a bad step, as in 1.8.5), then the update of the scaling
                and the zeroing of a bad step's gradients; then the wrapped optimizer's apply_gradients (a bad
                step still runs it, on zero gradients: SGD leaves the parameters, Momentum/Adam move them by
                their state, as in 1.8.5).
Where 1.8.5 builds that update from two `layers.Switch` (four conditional blocks, nested twice more), we
append logical_not + one fused `update_loss_scaling` op with the same decisions (ops/defs/amp_ops.py): no
sub-blocks, no host synchronisation, so the step stays capturable in a CUDA graph.

Our extension: dtype="bfloat16" (or FLAGS_amp_dtype=bfloat16 in the environment, for scripts left as they are)
runs the white ops in bfloat16 (Paddle 1.8 has float16 only). bfloat16 has
float32's range, so init_loss_scaling=1.0 with use_dynamic_loss_scaling=False is the usual choice there.
"""

from ....ir import flag_value
from ... import framework, layers, unique_name
from .fp16_lists import AutoMixedPrecisionLists
from .fp16_utils import low_precision_dtype, rewrite_program, update_role_var_grad

__all__ = ["decorate", "OptimizerWithMixedPrecision"]


class OptimizerWithMixedPrecision:
    """An optimizer plus mixed-precision training: minimize/backward/apply_gradients as the wrapped one's,
    with the program rewritten for float16, the loss scaled and the gradients unscaled and checked."""

    def __init__(self, optimizer, amp_lists, init_loss_scaling, use_dynamic_loss_scaling, incr_every_n_steps,
                 decr_every_n_nan_or_inf, incr_ratio, decr_ratio, dtype="float16"):
        low_precision_dtype(dtype)     # checks the name
        if use_dynamic_loss_scaling:
            # stricter than 1.8.5 on purpose: these values make its state machine grow on a bad step, or never
            if int(incr_every_n_steps) < 1 or int(decr_every_n_nan_or_inf) < 1:
                raise ValueError("incr_every_n_steps and decr_every_n_nan_or_inf must be >= 1, got %r and %r"
                                 % (incr_every_n_steps, decr_every_n_nan_or_inf))
            if incr_ratio <= 1.0 or not 0.0 < decr_ratio < 1.0:
                raise ValueError("need incr_ratio > 1 and 0 < decr_ratio < 1, got %r and %r"
                                 % (incr_ratio, decr_ratio))
        self._optimizer = optimizer
        self._amp_lists = amp_lists
        self._dtype = dtype
        self._param_grads = None
        self._train_program = framework.default_main_program()
        self._startup_prog = framework.default_startup_program()
        self._scaled_loss = None
        self._loss_scaling = layers.create_global_var(name=unique_name.generate("loss_scaling"), shape=[1],
                                                      value=init_loss_scaling, dtype="float32", persistable=True)
        self._use_dynamic_loss_scaling = use_dynamic_loss_scaling
        self._num_good_steps = self._num_bad_steps = None
        if use_dynamic_loss_scaling:
            # (1.8.5 builds these two constants into the program for its Switch; our fused op reads the
            # numbers from its attributes, the constants stay for the program's sake)
            self._incr_every_n_steps = layers.fill_constant(shape=[1], dtype="int32", value=incr_every_n_steps)
            self._decr_every_n_nan_or_inf = layers.fill_constant(shape=[1], dtype="int32",
                                                                 value=decr_every_n_nan_or_inf)
            self._incr_n, self._decr_n = int(incr_every_n_steps), int(decr_every_n_nan_or_inf)
            self._incr_ratio, self._decr_ratio = float(incr_ratio), float(decr_ratio)
            self._num_good_steps = layers.create_global_var(name=unique_name.generate("num_good_steps"),
                                                            shape=[1], value=0, dtype="int32", persistable=True)
            self._num_bad_steps = layers.create_global_var(name=unique_name.generate("num_bad_steps"),
                                                           shape=[1], value=0, dtype="int32", persistable=True)
        # the learning rate is float32, as the master parameters are
        if isinstance(optimizer._learning_rate, float):
            optimizer._learning_rate_map[framework.default_main_program()] = layers.create_global_var(
                name=unique_name.generate("learning_rate"), shape=[1], value=float(optimizer._learning_rate),
                dtype="float32", persistable=True)

    def get_loss_scaling(self):
        """The loss-scaling variable (fetch it to watch it change)."""
        return self._loss_scaling

    def get_scaled_loss(self):
        """loss * loss_scaling, the variable the backward pass starts from."""
        return self._scaled_loss

    def backward(self, loss, startup_program=None, parameter_list=None, no_grad_set=None, callbacks=None):
        """The backward pass of the scaled loss; returns [[param, grad / loss_scaling], ...]."""
        rewrite_program(self._train_program, self._amp_lists, self._dtype)
        self._scaled_loss = loss * self._loss_scaling
        self._params_grads = self._optimizer.backward(self._scaled_loss, startup_program, parameter_list,
                                                      no_grad_set, callbacks)
        update_role_var_grad(self._train_program, self._params_grads)
        scaled_params_grads = []
        for p, g in self._params_grads:
            with self._train_program._optimized_guard([p, g]):
                scaled_params_grads.append([p, g / self._loss_scaling])
        return scaled_params_grads

    def apply_gradients(self, scaled_params_grads):
        """With dynamic loss scaling: check the gradients, update the scaling, zero a bad step's gradients;
        then the wrapped optimizer's update. Returns its optimize ops."""
        if self._use_dynamic_loss_scaling:
            grads = [layers.reduce_sum(g) for _, g in scaled_params_grads]
            all_grads_sum = layers.reduce_sum(layers.concat(grads))
            is_overall_finite = layers.isfinite(all_grads_sum)
            found_inf = layers.logical_not(is_overall_finite)
            self._append_update_loss_scaling([g for _, g in scaled_params_grads], found_inf)
        return self._optimizer.apply_gradients(scaled_params_grads)

    def _append_update_loss_scaling(self, grads, found_inf):
        block = self._train_program.global_block()
        block.append_op(
            type="update_loss_scaling",
            inputs={"X": grads, "FoundInfinite": [found_inf], "PrevLossScaling": [self._loss_scaling],
                    "InGoodSteps": [self._num_good_steps], "InBadSteps": [self._num_bad_steps]},
            outputs={"Out": grads, "LossScaling": [self._loss_scaling], "OutGoodSteps": [self._num_good_steps],
                     "OutBadSteps": [self._num_bad_steps]},
            attrs={"incr_every_n_steps": self._incr_n, "decr_every_n_nan_or_inf": self._decr_n,
                   "incr_ratio": self._incr_ratio, "decr_ratio": self._decr_ratio})

    def apply_optimize(self, loss, startup_program, params_grads):
        return self.apply_gradients(params_grads)

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        """backward + apply_gradients; returns (optimize ops, [[param, unscaled grad], ...]) as 1.8.5."""
        scaled_params_grads = self.backward(loss, startup_program=startup_program,
                                            parameter_list=parameter_list, no_grad_set=no_grad_set)
        optimize_ops = self.apply_gradients(scaled_params_grads)
        return optimize_ops, scaled_params_grads


def decorate(optimizer, amp_lists=None, init_loss_scaling=2 ** 15, incr_every_n_steps=1000,
             decr_every_n_nan_or_inf=2, incr_ratio=2.0, decr_ratio=0.8, use_dynamic_loss_scaling=True,
             dtype=None):
    """Wrap `optimizer` for mixed-precision training (Paddle 1.8.5's signature and defaults; `dtype` is our
    extension: "float16", or "bfloat16"; None takes FLAGS_amp_dtype, from the environment or set_flags,
    "float16" by default)."""
    if dtype is None:
        dtype = flag_value("FLAGS_amp_dtype")
    if amp_lists is None:
        amp_lists = AutoMixedPrecisionLists()
    return OptimizerWithMixedPrecision(optimizer, amp_lists, init_loss_scaling, use_dynamic_loss_scaling,
                                       incr_every_n_steps, decr_every_n_nan_or_inf, incr_ratio, decr_ratio, dtype)

