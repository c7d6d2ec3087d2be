"""Learning-rate schedules: ops in the LRSched role over a global step counter `@LR_DECAY_COUNTER@`
(int64, starts at 0 on the first run). The transpiler moves these ops to the pservers."""

import math

from ...ir import Variable, default_main_program, unique_name
from .nn.common import autoincreased_step_counter
from .nn.math import elementwise_min
from .ops import ceil, cos, exp, floor
from .tensor import assign, cast, create_global_var, fill_constant
from .control_flow.flow import Switch

__all__ = ["exponential_decay", "natural_exp_decay", "inverse_time_decay", "polynomial_decay", "piecewise_decay",
           "noam_decay", "cosine_decay", "linear_lr_warmup"]


LR_COUNTER = "@LR_DECAY_COUNTER@"


def _decay_step_counter(begin=0):
    step = autoincreased_step_counter(counter_name=LR_COUNTER, begin=begin, step=1)
    return cast(step, "float32")


def _guard():
    return default_main_program()._lr_schedule_guard()


def exponential_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """lr * decay_rate ^ (step / decay_steps)"""
    with _guard():
        div = _decay_step_counter() / float(decay_steps)
        if staircase:
            div = floor(div)
        return learning_rate * (decay_rate ** div)


def natural_exp_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """lr * exp(-decay_rate * step / decay_steps)"""
    with _guard():
        div = _decay_step_counter() / float(decay_steps)
        if staircase:
            div = floor(div)
        return learning_rate * exp(-1 * decay_rate * div)


def inverse_time_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """lr / (1 + decay_rate * step / decay_steps)"""
    with _guard():
        div = _decay_step_counter() / float(decay_steps)
        if staircase:
            div = floor(div)
        return learning_rate / (1 + decay_rate * div)


def polynomial_decay(learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False):
    """(lr - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end; with cycle the horizon
    grows to the next multiple of decay_steps (at least one: a Switch sets it at step 0, as Paddle does)."""
    with _guard():
        step = _decay_step_counter()
        if cycle:
            div = ceil(step / decay_steps)
            zero = fill_constant([1], "float32", 0.0)
            one = fill_constant([1], "float32", 1.0)
            with Switch() as switch:
                with switch.case(step == zero):
                    assign(one, div)
            decay_steps = decay_steps * div
        else:
            limit = fill_constant([1], "float32", float(decay_steps))
            step = elementwise_min(step, limit)
        return (learning_rate - end_learning_rate) * ((1 - step / decay_steps) ** power) + end_learning_rate


def piecewise_decay(boundaries, values):
    """values[i] while step < boundaries[i]; values[-1] after the last boundary.

    Paddle's form: a persistable `learning_rate` var set by a Switch (one conditional_block per case, each
    assigning its value), so a transpiled program has the same blocks as Paddle's (the pservers get copies of
    the case blocks). Paddle named the var `learning_rate` outright, so two schedules in one program shared
    (and overwrote) one var; a second schedule here gets a unique name instead."""
    if len(values) - len(boundaries) != 1:
        raise ValueError("piecewise_decay: len(values) must be len(boundaries) + 1, got %d and %d"
                         % (len(values), len(boundaries)))
    with _guard():
        step = _decay_step_counter()
        lr = _global_lr_var("learning_rate", "float32")
        with Switch() as switch:
            for b, v in zip(boundaries, values):
                bv = fill_constant([1], "float32", float(b), force_cpu=True)
                vv = fill_constant([1], "float32", float(v))
                with switch.case(step < bv):
                    assign(vv, lr)
            last = fill_constant([1], "float32", float(values[-1]))
            with switch.default():
                assign(last, lr)
        return lr


def noam_decay(d_model, warmup_steps, learning_rate=1.0):
    """learning_rate * d_model^-0.5 * min(step^-0.5, warmup_steps^-1.5 * step) (learning_rate: Paddle 1.8)"""
    with _guard():
        step = _decay_step_counter(begin=1)
        a = step ** -0.5
        b = (warmup_steps ** -1.5) * step
        return learning_rate * (d_model ** -0.5) * elementwise_min(a, b)


def cosine_decay(learning_rate, step_each_epoch, epochs):
    with _guard():
        epoch = floor(_decay_step_counter() / float(step_each_epoch))
        # Paddle's order: (epoch * pi) / epochs, two float32 roundings
        return learning_rate * 0.5 * (cos(epoch * math.pi / epochs) + 1)


def _global_lr_var(name, dtype):
    """A persistable [1] var named as Paddle names it; a second schedule of the kind gets a unique name
    (Paddle reused the one name, so two schedules overwrote each other)."""
    if default_main_program().global_block().has_var(name):
        name = unique_name.generate(name)
    return create_global_var(shape=[1], value=0.0, dtype=dtype, persistable=True, name=name)


def linear_lr_warmup(learning_rate, warmup_steps, start_lr, end_lr):
    """start_lr -> end_lr linearly over warmup_steps, then learning_rate (a float or a schedule's Variable).

    Paddle's form: a persistable `learning_rate_warmup` var set by a Switch on step < warmup_steps."""
    if not isinstance(learning_rate, (Variable, float, int)) or isinstance(learning_rate, bool):
        raise TypeError("linear_lr_warmup: learning_rate must be a float, an int or a Variable, got %s"
                        % type(learning_rate).__name__)
    dtype = learning_rate.dtype if isinstance(learning_rate, Variable) else "float32"
    linear_step = float(end_lr) - float(start_lr)
    with _guard():
        lr = _global_lr_var("learning_rate_warmup", dtype)
        step = _decay_step_counter()
        with Switch() as switch:
            with switch.case(step < warmup_steps):
                assign(start_lr + linear_step * (step / float(warmup_steps)), lr)
            with switch.default():
                if not isinstance(learning_rate, Variable):
                    learning_rate = fill_constant([1], dtype, float(learning_rate))
                assign(learning_rate, lr)
        return lr
