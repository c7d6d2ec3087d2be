"""Optimizer, the base of fluid's optimizers: minimize = append_backward + clip + regularize + one Paddle
optimize op per parameter (sgd, momentum, adam, ...) with its state variables (moments, beta pows, learning
rate) in the program, so a transpiler can move them to parameter servers."""

import collections

from ...ir import (Variable, default_main_program, default_startup_program, device_guard, name_scope, notify_changed,
                   program_guard, unique_name)
from .. import layers
from ..backward.backward import append_backward
from ..clip import BaseGradientClipAttr, append_gradient_clip_ops
from ..initializer import Constant
from ..layer_helper import LayerHelper
from ..regularizer import append_regularization_ops

__all__ = ["Optimizer"]


class Optimizer:
    type = None

    def __init__(self, learning_rate, regularization=None, name=None, grad_clip=None):
        if not isinstance(learning_rate, (float, int, Variable)) or isinstance(learning_rate, bool):
            raise TypeError("learning_rate must be a float or a Variable, got %r" % (learning_rate,))
        self._learning_rate = float(learning_rate) if not isinstance(learning_rate, Variable) else learning_rate
        self.regularization = regularization
        self._name = name
        if grad_clip is not None:
            if not isinstance(grad_clip, BaseGradientClipAttr):
                raise TypeError("grad_clip must be a GradientClipByValue/ByNorm/ByGlobalNorm instance, got %r"
                                % (grad_clip,))
        self._grad_clip = grad_clip
        self._dtype = None
        self._learning_rate_map = {}
        self._accumulators = collections.defaultdict(dict)
        self.helper = None

    # learning rate ---------------------------------------------------------------------------------
    def _global_learning_rate(self, program=None):
        program = program or default_main_program()
        return self._learning_rate_map.get(program, None)

    def _create_global_learning_rate(self):
        prog = default_main_program()
        if isinstance(self._learning_rate, Variable):
            self._learning_rate_map[prog] = self._learning_rate
            return
        if self._global_learning_rate() is not None:
            return
        self._learning_rate_map[prog] = layers.create_global_var(
            name=unique_name.generate("learning_rate"), shape=[1], value=float(self._learning_rate),
            dtype=self._dtype or "float32", persistable=True)
        self._learning_rate_map[prog].belong_to_optimizer = True    # saved in .pdopt, as Paddle does

    def _create_param_lr(self, param_and_grad):
        param = param_and_grad[0]
        param_lr = param.optimize_attr.get("learning_rate", 1.0)
        if isinstance(param_lr, Variable):
            return param_lr
        if param_lr == 1.0:
            return self._global_learning_rate()
        with default_main_program()._lr_schedule_guard(is_with_opt=True), \
                name_scope("scale_with_param_lr"):
            return self._global_learning_rate() * float(param_lr)

    # state -----------------------------------------------------------------------------------------
    def _add_accumulator(self, name, param, dtype=None, fill_value=0.0, shape=None, device=None):
        if self._name is not None:
            name = self._name + "_" + name
        if param.name in self._accumulators[name]:
            raise ValueError("accumulator %s already exists for parameter %s" % (name, param.name))
        var = self.helper.create_global_variable(
            name=unique_name.generate(param.name + "_" + name), persistable=True, dtype=dtype or param.dtype,
            shape=param.shape if shape is None else shape, belong_to_optimizer=True)
        with device_guard(device):      # recorded as the initializer's op_device (Paddle: Adam's beta pows)
            self.helper.set_variable_initializer(var, initializer=Constant(value=float(fill_value)))
        self._accumulators[name][param.name] = var
        return var

    def _get_accumulator(self, name, param):
        if self._name is not None:
            name = self._name + "_" + name
        return self._accumulators[name][param.name]

    def _create_accumulators(self, block, parameters):
        pass

    def _append_optimize_op(self, block, param_and_grad):
        raise NotImplementedError

    def _finish_update(self, block, parameters_and_grads):
        pass

    # passes ----------------------------------------------------------------------------------------
    def _create_optimization_pass(self, parameters_and_grads):
        program = default_main_program()
        target = program.global_block()
        cur = program.current_block()
        if cur.idx != target.idx and cur.backward_block_idx >= 0:
            # minimize inside a sub-block (a cond branch): the update runs with the gradients, in the
            # backward block append_backward made for it (Paddle's target block)
            target = program.block(cur.backward_block_idx)
        start = len(target.ops)
        self.helper = LayerHelper(self.__class__.__name__)
        self._create_accumulators(target, [p for p, g in parameters_and_grads if p.trainable and g is not None])
        self._create_global_learning_rate()
        for p, g in parameters_and_grads:
            if g is None or not p.trainable:
                continue
            with p.block.program._optimized_guard([p, g]), name_scope("optimizer"):
                self._append_optimize_op(target, (p, g))
        self._finish_update(target, parameters_and_grads)
        return target.ops[start:]

    def backward(self, loss, startup_program=None, parameter_list=None, no_grad_set=None, callbacks=None):
        return append_backward(loss, parameter_list, no_grad_set, callbacks)

    def apply_gradients(self, params_grads):
        """Appends clip, regularization and the optimize ops; returns the ops, as Paddle 1.8 does."""
        return self._apply_gradients(params_grads)[0]

    def _apply_gradients(self, params_grads):
        """apply_gradients that also returns the (param, grad) pairs after clipping and regularization."""
        params_grads = sorted(params_grads, key=lambda pg: pg[0].name)
        if self._grad_clip is not None:
            params_grads = self._grad_clip(params_grads)
        else:
            params_grads = append_gradient_clip_ops(params_grads)
        params_grads = append_regularization_ops(params_grads, self.regularization)
        return self._create_optimization_pass(params_grads), params_grads

    def apply_optimize(self, loss, startup_program, params_grads):
        program = loss.block.program
        with program_guard(program, startup_program or default_startup_program()):
            return self.apply_gradients(params_grads)

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None, grad_clip=None):
        if not isinstance(loss, Variable):
            raise TypeError("minimize: loss must be a Variable, got %s" % type(loss).__name__)
        if grad_clip is not None:
            self._grad_clip = grad_clip
        program = loss.block.program
        with program_guard(program, startup_program or default_startup_program()):
            params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
            optimize_ops = self._apply_gradients(params_grads)[0]
        notify_changed(program, "minimize")
        # the pairs append_backward returned, in its order (Paddle 1.8 returns them, not the clipped and
        # regularized ones it sorts by name for the update)
        return optimize_ops, params_grads
