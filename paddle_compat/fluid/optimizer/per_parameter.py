"""Paddle 1.8's per-parameter optimizers: SGD, Momentum, Adam, Adagrad, RMSProp, Adamax, Ftrl, DecayedAdagrad,
Adadelta, Lamb, LarsMomentum, Dpsgd and DGCMomentum. Each appends Paddle's op type with Paddle's slots,
attributes and accumulator variables, so str(program) and the parameter-server transpiler see what Paddle's
would. Kernels: backends/lowering/kernels/optimizer_ops.py.
"""

from ...ir import Variable, name_scope
from .base import Optimizer

__all__ = ["SGD", "Momentum", "Adam", "Adagrad", "RMSProp", "Adamax", "SGDOptimizer", "MomentumOptimizer",
           "AdamOptimizer", "AdagradOptimizer", "RMSPropOptimizer", "AdamaxOptimizer",
           "Ftrl", "FtrlOptimizer", "DecayedAdagrad", "DecayedAdagradOptimizer", "Adadelta", "AdadeltaOptimizer",
           "LambOptimizer", "LarsMomentum", "LarsMomentumOptimizer", "Dpsgd", "DpsgdOptimizer",
           "DGCMomentumOptimizer", "Lamb"]


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
        # beta1 / beta2 may be Variables (a [1] tensor the program can change): the op then reads them from
        # its Beta1Tensor / Beta2Tensor inputs instead of the attributes, as in Paddle 1.8
        self._beta1 = beta1 if isinstance(beta1, Variable) else float(beta1)
        self._beta2 = beta2 if isinstance(beta2, Variable) else float(beta2)
        self._epsilon = float(epsilon)
        self._lazy_mode = lazy_mode

    def _create_accumulators(self, block, parameters):
        # a beta given as a Variable starts its pow accumulator at Paddle's defaults 0.9 / 0.999, not at the
        # Variable's value (Paddle 1.8 does so; its first step's bias correction uses them)
        b1 = 0.9 if isinstance(self._beta1, Variable) else self._beta1
        b2 = 0.999 if isinstance(self._beta2, Variable) else self._beta2
        for p in parameters:
            self._add_accumulator("moment1", p)
            self._add_accumulator("moment2", p)
            self._add_accumulator("beta1_pow_acc", p, dtype="float32", fill_value=b1, shape=[1], device="cpu")
            self._add_accumulator("beta2_pow_acc", p, dtype="float32", fill_value=b2, shape=[1], device="cpu")

    def _append_optimize_op(self, block, pg):
        p = pg[0]
        m1, m2 = self._get_accumulator("moment1", p), self._get_accumulator("moment2", p)
        b1, b2 = self._get_accumulator("beta1_pow_acc", p), self._get_accumulator("beta2_pow_acc", p)
        inputs = {"Param": [p], "Grad": [pg[1]], "LearningRate": [self._create_param_lr(pg)], "Moment1": [m1],
                  "Moment2": [m2], "Beta1Pow": [b1], "Beta2Pow": [b2]}
        attrs = {"epsilon": self._epsilon, "lazy_mode": self._lazy_mode, "min_row_size_to_use_multithread": 1000}
        for slot, key, beta in (("Beta1Tensor", "beta1", self._beta1), ("Beta2Tensor", "beta2", self._beta2)):
            if isinstance(beta, Variable):
                inputs[slot] = [beta]
            else:
                attrs[key] = beta
        return block.append_op(
            type="adam", inputs=inputs,
            outputs={"ParamOut": [p], "Moment1Out": [m1], "Moment2Out": [m2], "Beta1PowOut": [b1],
                     "Beta2PowOut": [b2]},
            attrs=attrs)


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


def _check(name, value):
    if value is None:
        raise ValueError("%s is not set" % name)
    return value


class FtrlOptimizer(Optimizer):
    type = "ftrl"
    _squared_acc_str = "squared"
    _linear_acc_str = "linear"

    def __init__(self, learning_rate, l1=0.0, l2=0.0, lr_power=-0.5, parameter_list=None, regularization=None,
                 grad_clip=None, name=None):
        super().__init__(_check("learning_rate", learning_rate), regularization, name, grad_clip)
        self._l1, self._l2, self._lr_power = float(l1), float(l2), float(lr_power)

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("squared", p)
            self._add_accumulator("linear", p)

    def _append_optimize_op(self, block, pg):
        sq, lin = self._get_accumulator("squared", pg[0]), self._get_accumulator("linear", pg[0])
        # Paddle 1.8's FtrlOptimizer passes l1 as the op's l2 attribute (a bug in Paddle); we keep it so
        # trained numbers match Paddle's. The `l2` argument is recorded on the optimizer only.
        return block.append_op(
            type="ftrl",
            inputs={"Param": [pg[0]], "Grad": [pg[1]], "SquaredAccumulator": [sq], "LinearAccumulator": [lin],
                    "LearningRate": [self._create_param_lr(pg)]},
            outputs={"ParamOut": [pg[0]], "SquaredAccumOut": [sq], "LinearAccumOut": [lin]},
            attrs={"l1": self._l1, "l2": self._l1, "lr_power": self._lr_power}, stop_gradient=True)


class DecayedAdagradOptimizer(Optimizer):
    type = "decayed_adagrad"
    _moment_acc_str = "moment"

    def __init__(self, learning_rate, decay=0.95, epsilon=1.0e-6, parameter_list=None, regularization=None,
                 grad_clip=None, name=None):
        super().__init__(_check("learning_rate", learning_rate), regularization, name, grad_clip)
        self._decay, self._epsilon = float(_check("decay", decay)), float(_check("epsilon", epsilon))

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("moment", p)

    def _append_optimize_op(self, block, pg):
        m = self._get_accumulator("moment", pg[0])
        return block.append_op(
            type="decayed_adagrad",
            inputs={"Param": [pg[0]], "Grad": [pg[1]], "Moment": [m], "LearningRate": [self._create_param_lr(pg)]},
            outputs={"ParamOut": [pg[0]], "MomentOut": [m]},
            attrs={"epsilon": self._epsilon, "decay": self._decay}, stop_gradient=True)


class AdadeltaOptimizer(Optimizer):
    """Paddle's adadelta op takes no learning rate (the learning_rate argument only names a global var)."""
    type = "adadelta"
    _avg_squared_grad_acc_str = "_avg_squared_grad"
    _avg_squared_update_acc_str = "_avg_squared_update"

    def __init__(self, learning_rate, epsilon=1.0e-6, rho=0.95, parameter_list=None, regularization=None,
                 grad_clip=None, name=None):
        super().__init__(_check("learning_rate", learning_rate), regularization, name, grad_clip)
        self._epsilon, self._rho = float(_check("epsilon", epsilon)), float(_check("rho", rho))

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("_avg_squared_grad", p)
            self._add_accumulator("_avg_squared_update", p)

    def _append_optimize_op(self, block, pg):
        g2 = self._get_accumulator("_avg_squared_grad", pg[0])
        u2 = self._get_accumulator("_avg_squared_update", pg[0])
        return block.append_op(
            type="adadelta",
            inputs={"Param": [pg[0]], "Grad": [pg[1]], "AvgSquaredGrad": [g2], "AvgSquaredUpdate": [u2]},
            outputs={"ParamOut": [pg[0]], "AvgSquaredGradOut": [g2], "AvgSquaredUpdateOut": [u2]},
            attrs={"epsilon": self._epsilon, "rho": self._rho}, stop_gradient=True)


class LambOptimizer(AdamOptimizer):
    type = "lamb"

    def __init__(self, learning_rate=0.001, lamb_weight_decay=0.01, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 parameter_list=None, regularization=None, grad_clip=None, exclude_from_weight_decay_fn=None,
                 name=None):
        super().__init__(learning_rate, beta1, beta2, epsilon, regularization, name, grad_clip=grad_clip)
        self._weight_decay = float(lamb_weight_decay)
        self._exclude_from_weight_decay_fn = exclude_from_weight_decay_fn

    def _append_optimize_op(self, block, pg):
        p = pg[0]
        m1, m2 = self._get_accumulator("moment1", p), self._get_accumulator("moment2", p)
        b1, b2 = self._get_accumulator("beta1_pow_acc", p), self._get_accumulator("beta2_pow_acc", p)
        excluded = self._exclude_from_weight_decay_fn is not None and self._exclude_from_weight_decay_fn(p)
        return block.append_op(
            type="lamb",
            inputs={"Param": [p], "Grad": [pg[1]], "LearningRate": [self._create_param_lr(pg)], "Moment1": [m1],
                    "Moment2": [m2], "Beta1Pow": [b1], "Beta2Pow": [b2]},
            outputs={"ParamOut": [p], "Moment1Out": [m1], "Moment2Out": [m2]},
            attrs={"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon,
                   "weight_decay": 0.0 if excluded else self._weight_decay}, stop_gradient=True)


class LarsMomentumOptimizer(Optimizer):
    type = "lars_momentum"
    _velocity_acc_str = "velocity"

    def __init__(self, learning_rate, momentum, lars_coeff=0.001, lars_weight_decay=0.0005, parameter_list=None,
                 regularization=None, grad_clip=None, name=None):
        super().__init__(_check("learning_rate", learning_rate), regularization, name, grad_clip)
        self._momentum = float(_check("momentum", momentum))
        self._lars_coeff, self._lars_weight_decay = float(lars_coeff), float(lars_weight_decay)

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("velocity", p)

    def _append_optimize_op(self, block, pg):
        v = self._get_accumulator("velocity", pg[0])
        return block.append_op(
            type="lars_momentum",
            inputs={"Param": [pg[0]], "Grad": [pg[1]], "Velocity": [v], "LearningRate": [self._create_param_lr(pg)]},
            outputs={"ParamOut": [pg[0]], "VelocityOut": [v]},
            attrs={"mu": self._momentum, "lars_coeff": self._lars_coeff,
                   "lars_weight_decay": self._lars_weight_decay}, stop_gradient=True)


class DpsgdOptimizer(Optimizer):
    """Differentially private SGD: clip the gradient's norm to `clip`, add Gaussian noise (sigma / batch_size).
    The noise comes from torch's generator, so runs match Paddle's numbers only with sigma = 0."""
    type = "dpsgd"

    def __init__(self, learning_rate=0.001, clip=0.9, batch_size=0.999, sigma=1e-8, parameter_list=None):
        super().__init__(_check("learning_rate", learning_rate))
        self._clip, self._batch_size, self._sigma = float(clip), float(batch_size), float(sigma)
        self._seed = None   # as in Paddle: a debugging knob; 0 means seed from the clock

    def _append_optimize_op(self, block, pg):
        if self._seed is None:
            self._seed = 0
        return block.append_op(
            type="dpsgd",
            inputs={"Param": [pg[0]], "Grad": [pg[1]], "LearningRate": [self._create_param_lr(pg)]},
            outputs={"ParamOut": [pg[0]]},
            attrs={"clip": self._clip, "batch_size": self._batch_size, "sigma": self._sigma, "seed": self._seed},
            stop_gradient=True)


class DGCMomentumOptimizer(MomentumOptimizer):
    """Deep Gradient Compression, run as plain Momentum.

    Paddle's DGC is a GPU-only, multi-trainer communication optimization: after `rampup_begin_step` it
    sends only the top (1 - sparsity) of each gradient through NCCL and keeps the rest in local
    accumulators (with momentum correction). Before rampup its update *is* momentum. Our collective backend
    all-reduces dense gradients, so we take the exact momentum update throughout: the same training
    semantics without the bandwidth saving (and without DGC's approximation). The op type is Paddle's
    `momentum`; the DGC arguments are checked and kept on the optimizer."""

    def __init__(self, learning_rate, momentum, rampup_begin_step, rampup_step=1, sparsity=(0.999,),
                 parameter_list=None, use_nesterov=False, num_trainers=None, regularization=None, grad_clip=None,
                 name=None):
        if rampup_begin_step is None or rampup_begin_step < 0:
            raise ValueError("DGCMomentumOptimizer: rampup_begin_step must be >= 0, got %r" % (rampup_begin_step,))
        if rampup_step is None or rampup_step <= 0:
            raise ValueError("DGCMomentumOptimizer: rampup_step must be > 0, got %r" % (rampup_step,))
        super().__init__(learning_rate, momentum, use_nesterov, regularization, name, grad_clip)
        self._rampup_begin_step, self._rampup_step = rampup_begin_step, rampup_step
        self._sparsity = list(sparsity)
        self._num_trainers = num_trainers


Ftrl = FtrlOptimizer
DecayedAdagrad = DecayedAdagradOptimizer
Adadelta = AdadeltaOptimizer
LarsMomentum = LarsMomentumOptimizer
Dpsgd = DpsgdOptimizer
Lamb = LambOptimizer
