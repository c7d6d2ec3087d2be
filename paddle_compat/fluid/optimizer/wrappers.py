"""Paddle 1.8's optimizer wrappers and parameter averaging: ExponentialMovingAverage, ModelAverage,
LookaheadOptimizer, RecomputeOptimizer.

Where Paddle branches with `layers.Switch` (sub-blocks), we select with a 0/1 float mask in the same block:
`mask * a + (1 - mask) * b` is exactly a or b, so the numbers are Paddle's while the program stays flat.
"""

import contextlib

from ...ir import name_scope, unique_name
from .. import layers
from ...ir.dtypes import FLOAT_TYPES
from ...ir import Program, convert_dtype, default_main_program, default_startup_program, program_guard
from ..layer_helper import LayerHelper
from ..backward.backward import append_backward
from .base import Optimizer
from ...ir import Variable, notify_changed

__all__ = ["ExponentialMovingAverage", "ModelAverage", "LookaheadOptimizer", "RecomputeOptimizer"]


def _mirror(block, var, persistable=None):
    """`var` (of another program) as a variable of `block`: same name, shape, dtype, persistable.

    The backup of the trained parameters (`tmp`) must outlive the apply program until restore runs: it is
    persistable in the apply/restore programs (and stays a plain temporary in the train program)."""
    if block.has_var(var.name):
        return block.var(var.name)
    return block.create_var(name=var.name, shape=var.shape, dtype=var.dtype, stop_gradient=True,
                            persistable=var.persistable if persistable is None else persistable)


def _select(mask, a, b):
    """mask * a + (1 - mask) * b for a 0/1 float mask of shape [1]."""
    return layers.elementwise_add(layers.elementwise_mul(a, mask), layers.elementwise_mul(b, 1.0 - mask))


def _averaged_params(program):
    return [p for p in program.global_block().all_parameters() if p.do_model_average is not False]


class _AppliesAverage:
    """apply()/restore() of both averaging wrappers: run apply_program, and restore_program afterwards."""

    @contextlib.contextmanager
    def apply(self, executor, need_restore=True):
        """`with avg.apply(exe):` runs with the averaged parameters, then restores (unless need_restore=False)."""
        executor.run(self.apply_program)
        try:
            yield
        finally:
            if need_restore:
                self.restore(executor)

    def restore(self, executor):
        executor.run(self.restore_program)


class ExponentialMovingAverage(_AppliesAverage):
    """ema = decay * ema + (1 - decay) * param each step (update()); apply() swaps in the bias-corrected
    ema / (1 - decay^t) and restore() puts the trained parameters back. With thres_steps, the decay is
    min(decay, (1 + t) / (10 + t)) as in Paddle."""

    def __init__(self, decay=0.999, thres_steps=None, name=None):
        self._decay = decay
        self._thres_steps = thres_steps
        self._name = name if name is not None else ""
        self._decay_var = self._get_ema_decay()
        self._step_counter_name = "@EMA_STEP_COUNTER@"
        main = default_main_program()
        self._params_tmps = []
        for param in _averaged_params(main):
            tmp = param.block.create_var(name=unique_name.generate(".".join([self._name + param.name, "ema_tmp"])),
                                         dtype=param.dtype, shape=param.shape, persistable=False,
                                         stop_gradient=True)
            self._params_tmps.append((param, tmp))
        self._ema_vars = {}
        for param, tmp in self._params_tmps:
            with main._optimized_guard([param, tmp]), name_scope("moving_average"):
                self._ema_vars[param.name] = layers.create_global_var(
                    name=unique_name.generate(self._name + param.name + "_ema"), shape=param.shape, value=0.0,
                    dtype=param.dtype, persistable=True)

        self.apply_program = Program()
        block = self.apply_program.global_block()
        with program_guard(self.apply_program, Program()):
            step = _mirror(block, main.global_block().var(self._step_counter_name)) \
                if main.global_block().has_var(self._step_counter_name) else \
                block.create_var(name=self._step_counter_name, shape=[1], dtype="int64", persistable=True)
            step_f = layers.cast(step, "float32")
            decay_pow = layers.elementwise_pow(_mirror(block, self._decay_var), step_f)
            started = layers.cast(layers.greater_than(step_f, layers.fill_constant([1], "float32", 0.0)), "float32")
            # at step 0 Paddle skips the correction (decay^0 = 1 would divide by zero)
            denom = _select(started, 1.0 - decay_pow, layers.fill_constant([1], "float32", 1.0))
            for param, tmp in self._params_tmps:
                param, tmp = _mirror(block, param), _mirror(block, tmp, persistable=True)
                ema = _mirror(block, self._ema_vars[param.name])
                layers.assign(input=param, output=tmp)
                layers.assign(input=layers.elementwise_div(ema, denom), output=ema)
                layers.assign(input=ema, output=param)

        self.restore_program = Program()
        block = self.restore_program.global_block()
        with program_guard(self.restore_program, Program()):
            for param, tmp in self._params_tmps:
                layers.assign(input=_mirror(block, tmp, persistable=True), output=_mirror(block, param))

    def _get_ema_decay(self):
        with default_main_program()._lr_schedule_guard():
            decay_var = layers.create_global_var(shape=[1], value=self._decay, dtype="float32", persistable=True,
                                                 name="scheduled_ema_decay_rate")
            # Paddle 1.8 computes (t + 1) / (t + 10) in t's own dtype: for an integer step counter that is
            # integer division, 0, and its `0 < int(decay)` test is false, so the decay stays constant. We
            # keep that (a float thres_steps gets the schedule min(decay, (t + 1) / (t + 10))).
            if self._thres_steps is not None and convert_dtype(self._thres_steps.dtype) in FLOAT_TYPES:
                t = layers.cast(self._thres_steps, "float32")
                decay_t = layers.elementwise_div(t + 1.0, t + 10.0)
                layers.assign(layers.elementwise_min(decay_t, layers.fill_constant([1], "float32", self._decay)),
                              decay_var)
        return decay_var

    def update(self):
        """Appends the moving-average update to the train program (call after minimize)."""
        layers.autoincreased_step_counter(counter_name=self._step_counter_name)
        main = default_main_program()
        for param, tmp in self._params_tmps:
            with main._optimized_guard([param, tmp]), name_scope("moving_average"):
                ema = self._ema_vars[param.name]
                ema_t = ema * self._decay_var + param * (1.0 - self._decay_var)
                layers.assign(input=ema_t, output=ema)


class ModelAverage(_AppliesAverage, Optimizer):
    """Averages each parameter over a sliding window of recent steps (Paddle's `average_accumulates` op with
    its sum_1/sum_2/sum_3 and counters); apply() swaps the average in, restore() swaps the trained values
    back. Construct it after minimize(), as in Paddle."""

    def __init__(self, average_window_rate, min_average_window=10000, max_average_window=10000,
                 regularization=None, name=None):
        super().__init__(0.0, regularization=regularization, name=name)
        self.average_window = average_window_rate
        self.min_average_window = min_average_window
        self.max_average_window = max_average_window
        main = default_main_program()
        self.params_grads = []
        for param in _averaged_params(main):
            tmp = param.block.create_var(name=unique_name.generate(".".join([param.name, "tmp"])),
                                         dtype=param.dtype, shape=param.shape, persistable=False,
                                         stop_gradient=True)
            self.params_grads.append((param, tmp))
        for param, tmp in self.params_grads:
            with main._optimized_guard([param, tmp]), name_scope("move_average"):
                self._append_average_accumulate_op(param)

        self.apply_program = Program()
        block = self.apply_program.global_block()
        with program_guard(self.apply_program, Program()):
            for param, tmp in self.params_grads:
                self._add_average_apply_op(block, param, tmp)
        self.restore_program = Program()
        block = self.restore_program.global_block()
        with program_guard(self.restore_program, Program()):
            for param, tmp in self.params_grads:
                layers.assign(input=_mirror(block, tmp, persistable=True), output=_mirror(block, param))

    def _state(self, param):
        return [self._get_accumulator(n, param) for n in ("sum_1", "sum_2", "sum_3", "num_accumulates",
                                                          "old_num_accumulates", "num_updates")]

    def _append_average_accumulate_op(self, param):
        self.helper = LayerHelper("average_accumulate")
        for n in ("sum_1", "sum_2", "sum_3"):
            self._add_accumulator(n, param)
        for n in ("num_accumulates", "old_num_accumulates", "num_updates"):
            self._add_accumulator(n, param, dtype="int64", shape=[1])
        s1, s2, s3, n_acc, n_old, n_upd = self._state(param)
        self.helper.append_op(
            type="average_accumulates",
            inputs={"param": [param], "in_sum_1": [s1], "in_sum_2": [s2], "in_sum_3": [s3],
                    "in_num_accumulates": [n_acc], "in_old_num_accumulates": [n_old], "in_num_updates": [n_upd]},
            outputs={"out_sum_1": [s1], "out_sum_2": [s2], "out_sum_3": [s3], "out_num_accumulates": [n_acc],
                     "out_old_num_accumulates": [n_old], "out_num_updates": [n_upd]},
            attrs={"average_window": float(self.average_window), "min_average_window": int(self.min_average_window),
                   "max_average_window": int(self.max_average_window)}, stop_gradient=True)

    def _add_average_apply_op(self, block, param, tmp):
        s1, s2, s3, n_acc, n_old, _ = [_mirror(block, v) for v in self._state(param)]
        param, tmp = _mirror(block, param), _mirror(block, tmp, persistable=True)
        layers.assign(input=param, output=tmp)
        count = layers.cast(layers.sums([n_acc, n_old]), self._dtype or "float32")
        total = layers.cast(layers.sums([s1, s2, s3]), self._dtype or "float32")
        block.append_op(type="elementwise_div", inputs={"X": [total], "Y": [count]}, outputs={"Out": [param]},
                        attrs={"axis": -1})

    def minimize(self, *args, **kwargs):
        raise NotImplementedError("ModelAverage does not minimize: build it after another optimizer's minimize()")


class LookaheadOptimizer:
    """Every k steps: slow = alpha * fast + (1 - alpha) * slow, and fast = slow (Paddle's Lookahead)."""

    def __init__(self, inner_optimizer, alpha=0.5, k=5):
        if inner_optimizer is None:
            raise ValueError("LookaheadOptimizer: inner optimizer can not be None")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError("LookaheadOptimizer: alpha must be in [0, 1], got %r" % (alpha,))
        if not isinstance(k, int) or k <= 0:
            raise ValueError("LookaheadOptimizer: k must be a positive integer, got %r" % (k,))
        self.inner_optimizer, self.alpha, self.k = inner_optimizer, alpha, k
        self.type = "lookahead"

    def minimize(self, loss, startup_program=None):
        mini_out = self.inner_optimizer.minimize(loss, startup_program=startup_program)
        startup_program = startup_program or default_startup_program()
        main_block = loss.block
        params = [p.name for p in main_block.all_parameters()]
        slow = {}
        sblock = startup_program.global_block()
        for name in params:
            fast = main_block.var(name)
            slow[name] = main_block.create_var(name=name + "@SLOW", shape=fast.shape, dtype=fast.dtype,
                                               persistable=True)
            sfast = sblock.var(name)
            sslow = sblock.create_var(name=name + "@SLOW", shape=sfast.shape, dtype=sfast.dtype, persistable=True)
            sblock.append_op(type="assign", inputs={"X": [sfast]}, outputs={"Out": [sslow]})
        with program_guard(main_block.program, startup_program):
            k = layers.create_global_var(name="lookahead_k", shape=[1], value=int(self.k), dtype="int32",
                                         persistable=True)
            alpha = layers.create_global_var(name="lookahead_alpha", shape=[1], value=float(self.alpha),
                                             dtype="float32", persistable=True)
            step = layers.create_global_var(name="lookahead_step", shape=[1], value=0, dtype="int32",
                                            persistable=True)
            layers.increment(x=step, value=1.0, in_place=True)
            zero = layers.fill_constant(shape=[1], dtype="int32", value=0)
            sync = layers.cast(layers.equal(layers.elementwise_mod(step, k), zero), "float32")
            for name in params:
                fast, s = main_block.var(name), slow[name]
                mixed = layers.elementwise_add(layers.elementwise_mul(fast, alpha),
                                               layers.elementwise_mul(s, 1.0 - alpha))
                layers.assign(input=_select(sync, mixed, s), output=s)
                layers.assign(input=_select(sync, mixed, fast), output=fast)
        return mini_out


class RecomputeOptimizer(Optimizer):
    """Paddle's RecomputeOptimizer: backward recomputes the forward segments between checkpoints
    (append_backward(..., checkpoints=...), see fluid/backward/recompute.py); everything else is the inner
    optimizer's. The program and the gradients are Paddle's; the memory saving is not (autograd keeps the
    forward activations)."""

    def __init__(self, optimizer):
        self._optimizer = optimizer
        self._checkpoints = None
        self._learning_rate = optimizer._learning_rate
        self._learning_rate_map = optimizer._learning_rate_map
        self.type = getattr(optimizer, "type", None)

    def _set_checkpoints(self, checkpoints):
        if not isinstance(checkpoints, (list, tuple)):
            raise TypeError("RecomputeOptimizer: checkpoints must be a list of Variables")
        for i, c in enumerate(checkpoints):
            # Paddle takes Variables; a variable's name is accepted too
            if not isinstance(c, (Variable, str)):
                raise TypeError("RecomputeOptimizer: checkpoints[%d] must be a Variable or a name, got %s"
                                % (i, type(c).__name__))
        self._checkpoints = list(checkpoints)

    def load(self, stat_dict):
        # Paddle 1.8's own message (its tests compare it): loading state is a dygraph-only API
        raise NotImplementedError("load function is not supported by Recompute Optimizer for now")

    def backward(self, loss, startup_program=None, parameter_list=None, no_grad_set=None, callbacks=None):
        program = loss.block.program
        with program_guard(program, startup_program):
            params_grads = append_backward(loss, parameter_list, no_grad_set, checkpoints=self._checkpoints)
        return params_grads

    def apply_gradients(self, params_grads):
        return self._optimizer.apply_gradients(params_grads)

    def apply_optimize(self, loss, startup_program, params_grads):
        return self._optimizer.apply_optimize(loss, startup_program, params_grads)

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None, grad_clip=None):
        if not isinstance(loss, Variable):
            raise TypeError("minimize: loss must be a Variable, got %s" % type(loss).__name__)
        if self._checkpoints is None:
            raise ValueError("RecomputeOptimizer: call _set_checkpoints before minimize")
        if grad_clip is not None:
            self._optimizer._grad_clip = grad_clip
        params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
        optimize_ops = self.apply_optimize(loss, startup_program, params_grads)
        notify_changed(loss.block.program, "minimize")
        return optimize_ops, params_grads
