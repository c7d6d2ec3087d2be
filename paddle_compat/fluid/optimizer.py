"""Optimizers: minimize = append_backward + clip + regularize + one Paddle optimize op per parameter
(sgd, momentum, adam, ...) with its state variables (moments, beta pows, learning rate) in the program,
so a transpiler can move them to parameter servers."""

import collections

from ..ir import default_main_program, default_startup_program, name_scope, unique_name
from . import layers
from .backward import append_backward
from .clip import append_gradient_clip_ops
from ..ir import Variable, device_guard, program_guard
from .initializer import Constant
from .layer_helper import LayerHelper
from ..ir import notify_changed
from .regularizer import append_regularization_ops

__all__ = ["SGD", "Momentum", "Adam", "Adagrad", "RMSProp", "Adamax", "SGDOptimizer", "MomentumOptimizer",
           "AdamOptimizer", "AdagradOptimizer", "RMSPropOptimizer", "AdamaxOptimizer", "Optimizer"]


class Optimizer:
    type = None

    def __init__(self, learning_rate, regularization=None, name=None, grad_clip=None):
        if not isinstance(learning_rate, (float, int, Variable)) or isinstance(learning_rate, bool):
            raise TypeError("learning_rate must be a float or a Variable, got %r" % (learning_rate,))
        self._learning_rate = float(learning_rate) if not isinstance(learning_rate, Variable) else learning_rate
        self.regularization = regularization
        self._name = name
        if grad_clip is not None:
            from .clip import BaseGradientClipAttr
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
            optimize_ops, params_grads = self._apply_gradients(params_grads)
        notify_changed(program, "minimize")
        return optimize_ops, params_grads


class SGDOptimizer(Optimizer):
    type = "sgd"

    def _append_optimize_op(self, block, pg):
        return block.append_op(type="sgd", inputs={"Param": [pg[0]], "Grad": [pg[1]],
                                                   "LearningRate": [self._create_param_lr(pg)]},
                                outputs={"ParamOut": [pg[0]]})


class MomentumOptimizer(Optimizer):
    type = "momentum"
    # accumulator names (Paddle's attribute names; subclasses and tests read them)
    _velocity_acc_str = "velocity"

    def __init__(self, learning_rate, momentum, use_nesterov=False, regularization=None, name=None,
                 grad_clip=None):
        super().__init__(learning_rate, regularization, name, grad_clip)
        self._momentum = float(momentum)
        self._use_nesterov = bool(use_nesterov)

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("velocity", p)

    def _append_optimize_op(self, block, pg):
        v = self._get_accumulator("velocity", pg[0])
        return block.append_op(type="momentum",
                               inputs={"Param": [pg[0]], "Grad": [pg[1]], "Velocity": [v],
                                       "LearningRate": [self._create_param_lr(pg)]},
                               outputs={"ParamOut": [pg[0]], "VelocityOut": [v]},
                               attrs={"mu": self._momentum, "use_nesterov": self._use_nesterov})


class AdamOptimizer(Optimizer):
    type = "adam"
    _moment1_acc_str = "moment1"
    _moment2_acc_str = "moment2"
    _beta1_pow_acc_str = "beta1_pow_acc"
    _beta2_pow_acc_str = "beta2_pow_acc"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, regularization=None,
                 name=None, lazy_mode=False, grad_clip=None):
        super().__init__(learning_rate, regularization, name, grad_clip)
        self._beta1, self._beta2, self._epsilon = float(beta1), float(beta2), float(epsilon)
        self._lazy_mode = lazy_mode

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("moment1", p)
            self._add_accumulator("moment2", p)
            self._add_accumulator("beta1_pow_acc", p, dtype="float32", fill_value=self._beta1, shape=[1], device="cpu")
            self._add_accumulator("beta2_pow_acc", p, dtype="float32", fill_value=self._beta2, shape=[1], device="cpu")

    def _append_optimize_op(self, block, pg):
        p = pg[0]
        m1, m2 = self._get_accumulator("moment1", p), self._get_accumulator("moment2", p)
        b1, b2 = self._get_accumulator("beta1_pow_acc", p), self._get_accumulator("beta2_pow_acc", p)
        return block.append_op(
            type="adam",
            inputs={"Param": [p], "Grad": [pg[1]], "LearningRate": [self._create_param_lr(pg)], "Moment1": [m1],
                    "Moment2": [m2], "Beta1Pow": [b1], "Beta2Pow": [b2]},
            outputs={"ParamOut": [p], "Moment1Out": [m1], "Moment2Out": [m2], "Beta1PowOut": [b1],
                     "Beta2PowOut": [b2]},
            attrs={"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon,
                   "lazy_mode": self._lazy_mode, "min_row_size_to_use_multithread": 1000})


class AdagradOptimizer(Optimizer):
    type = "adagrad"
    _moment_acc_str = "moment"

    def __init__(self, learning_rate, epsilon=1.0e-6, regularization=None, name=None,
                 initial_accumulator_value=0.0, grad_clip=None):
        super().__init__(learning_rate, regularization, name, grad_clip)
        self._epsilon = float(epsilon)
        self.initial_accumulator_value = float(initial_accumulator_value)

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("moment", p, fill_value=self.initial_accumulator_value)

    def _append_optimize_op(self, block, pg):
        m = self._get_accumulator("moment", pg[0])
        return block.append_op(type="adagrad",
                               inputs={"Param": [pg[0]], "Grad": [pg[1]], "Moment": [m],
                                       "LearningRate": [self._create_param_lr(pg)]},
                               outputs={"ParamOut": [pg[0]], "MomentOut": [m]}, attrs={"epsilon": self._epsilon})


class RMSPropOptimizer(Optimizer):
    type = "rmsprop"
    _momentum_acc_str = "momentum"
    _mean_square_acc_str = "mean_square"
    _mean_grad_acc_str = "mean_grad"

    def __init__(self, learning_rate, rho=0.95, epsilon=1.0e-6, momentum=0.0, centered=False,
                 regularization=None, name=None, grad_clip=None):
        super().__init__(learning_rate, regularization, name, grad_clip)
        self._rho, self._epsilon, self._momentum = float(rho), float(epsilon), float(momentum)
        self._centered = bool(centered)

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("momentum", p)
            self._add_accumulator("mean_square", p)
            self._add_accumulator("mean_grad", p)

    def _append_optimize_op(self, block, pg):
        p = pg[0]
        mom, ms, mg = (self._get_accumulator(n, p) for n in ("momentum", "mean_square", "mean_grad"))
        return block.append_op(
            type="rmsprop",
            inputs={"Param": [p], "Grad": [pg[1]], "Moment": [mom], "MeanSquare": [ms], "MeanGrad": [mg],
                    "LearningRate": [self._create_param_lr(pg)]},
            outputs={"ParamOut": [p], "MomentOut": [mom], "MeanSquareOut": [ms], "MeanGradOut": [mg]},
            attrs={"epsilon": self._epsilon, "decay": self._rho, "momentum": self._momentum,
                   "centered": self._centered})


class AdamaxOptimizer(Optimizer):
    type = "adamax"
    _moment_acc_str = "moment"
    _inf_norm_acc_str = "inf_norm"
    _beta1_pow_acc_str = "beta1_pow_acc"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, regularization=None,
                 name=None, grad_clip=None):
        super().__init__(learning_rate, regularization, name, grad_clip)
        self._beta1, self._beta2, self._epsilon = float(beta1), float(beta2), float(epsilon)

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("moment", p)
            self._add_accumulator("inf_norm", p)
            self._add_accumulator("beta1_pow_acc", p, dtype="float32", fill_value=self._beta1, shape=[1])

    def _append_optimize_op(self, block, pg):
        p = pg[0]
        m, inf, b1 = (self._get_accumulator(n, p) for n in ("moment", "inf_norm", "beta1_pow_acc"))
        return block.append_op(
            type="adamax",
            inputs={"Param": [p], "Grad": [pg[1]], "LearningRate": [self._create_param_lr(pg)], "Moment": [m],
                    "InfNorm": [inf], "Beta1Pow": [b1]},
            outputs={"ParamOut": [p], "MomentOut": [m], "InfNormOut": [inf]},
            attrs={"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon})

    def _finish_update(self, block, parameters_and_grads):
        """Paddle's Adamax advances beta1^t with a `scale` op after the update."""
        for p, g in parameters_and_grads:
            if g is None or not p.trainable:
                continue
            with p.block.program._optimized_guard([p, g]), name_scope("adamax"):
                b1 = self._get_accumulator("beta1_pow_acc", p)
                block.append_op(type="scale", inputs={"X": [b1]}, outputs={"Out": [b1]},
                                attrs={"scale": self._beta1, "bias": 0.0, "bias_after_scale": True})


SGD = SGDOptimizer
Momentum = MomentumOptimizer
Adam = AdamOptimizer
Adagrad = AdagradOptimizer
RMSProp = RMSPropOptimizer
Adamax = AdamaxOptimizer

# Paddle 1.8's other optimizers live in their own modules; fluid.optimizer offers them all, as Paddle's does.
from .optimizer_adaptive import *  # noqa: F401,F403,E402
from .optimizer_adaptive import Lamb, __all__ as _adaptive_all  # noqa: E402
from .optimizer_wrappers import *  # noqa: F401,F403,E402
from .optimizer_wrappers import __all__ as _wrappers_all  # noqa: E402

__all__ += _adaptive_all + _wrappers_all + ["Lamb"]
