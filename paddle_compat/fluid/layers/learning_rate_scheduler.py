"""Learning-rate schedules: ops in the LRSched role over a global step counter `@LR_DECAY_COUNTER@`
(int64, starts at 0 on the first run). The transpiler moves these ops to the pservers."""

import math

from .. import framework
from . import nn, ops, tensor

__all__ = ["exponential_decay", "natural_exp_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_decay", "noam_decay", "cosine_decay"]

LR_COUNTER = "@LR_DECAY_COUNTER@"


def _decay_step_counter(begin=0):
    step = nn.autoincreased_step_counter(counter_name=LR_COUNTER, begin=begin, step=1)
    return tensor.cast(step, "float32")


def _guard():
    return framework.default_main_program()._lr_schedule_guard()


def exponential_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """lr * decay_rate ^ (step / decay_steps)"""
    with _guard():
        div = _decay_step_counter() / float(decay_steps)
        if staircase:
            div = ops.floor(div)
        return learning_rate * (decay_rate ** div)


def natural_exp_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """lr * exp(-decay_rate * step / decay_steps)"""
    with _guard():
        div = _decay_step_counter() / float(decay_steps)
        if staircase:
            div = ops.floor(div)
        return learning_rate * ops.exp(-1 * decay_rate * div)


def inverse_time_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """lr / (1 + decay_rate * step / decay_steps)"""
    with _guard():
        div = _decay_step_counter() / float(decay_steps)
        if staircase:
            div = ops.floor(div)
        return learning_rate / (1 + decay_rate * div)


def polynomial_decay(learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False):
    """(lr - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end; with cycle the horizon
    grows to the next multiple of decay_steps (at least one)."""
    with _guard():
        step = _decay_step_counter()
        if cycle:
            div = ops.ceil(step / float(decay_steps))
            one = tensor.fill_constant([1], "float32", 1.0)
            div = ops.elementwise_max(div, one)   # Paddle's Switch: step 0 -> 1
            steps = div * float(decay_steps)
            frac = step / steps
        else:
            limit = tensor.fill_constant([1], "float32", float(decay_steps))
            step = ops.elementwise_min(step, limit)
            frac = step / float(decay_steps)
        return (learning_rate - end_learning_rate) * ((1 - frac) ** power) + end_learning_rate


def piecewise_decay(boundaries, values):
    """values[i] while step < boundaries[i]; values[-1] after the last boundary.

    Paddle built this from a Switch of conditional blocks; here it is the exact sum
    sum_i values[i] * indicator_i, whose indicators are 0/1, so the value is bit-identical."""
    if len(values) - len(boundaries) != 1:
        raise ValueError("piecewise_decay: len(values) must be len(boundaries) + 1, got %d and %d"
                         % (len(values), len(boundaries)))
    with _guard():
        step = _decay_step_counter()
        below = []
        for b in boundaries:
            bv = tensor.fill_constant([1], "float32", float(b), force_cpu=True)
            below.append(tensor.cast(ops.less_than(step, bv), "float32"))
        terms = [below[0] * float(values[0])]
        for i in range(1, len(boundaries)):
            terms.append((below[i] - below[i - 1]) * float(values[i]))
        terms.append((1.0 - below[-1]) * float(values[-1]))
        return tensor.sums(terms)


def noam_decay(d_model, warmup_steps, learning_rate=1.0):
    """learning_rate * d_model^-0.5 * min(step^-0.5, warmup_steps^-1.5 * step) (learning_rate: Paddle 1.8)"""
    with _guard():
        step = _decay_step_counter(begin=1)
        a = step ** -0.5
        b = (warmup_steps ** -1.5) * step
        return learning_rate * (d_model ** -0.5) * ops.elementwise_min(a, b)


def cosine_decay(learning_rate, step_each_epoch, epochs):
    with _guard():
        epoch = ops.floor(_decay_step_counter() / float(step_each_epoch))
        return learning_rate * 0.5 * (ops.cos(epoch * (math.pi / epochs)) + 1)
