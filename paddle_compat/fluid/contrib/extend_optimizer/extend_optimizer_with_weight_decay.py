"""extend_with_decoupled_weight_decay(Optimizer class) -> that optimizer with decoupled weight decay (AdamW when
given Adam): new_param = optimizer_update(param - coeff * param_before), as Paddle 1.8 orders it — the decay
ops (param * coeff, then param -= that) come before the optimizer's update, which uses the gradients of the
undecayed parameters."""

from ....ir import Variable, default_startup_program, name_scope, program_guard
from ... import layers
from ...optimizer.base import Optimizer

__all__ = ["extend_with_decoupled_weight_decay"]


class DecoupledWeightDecay:
    def __init__(self, coeff=0.0, apply_decay_param_fun=None, **kwargs):
        if isinstance(coeff, int) and not isinstance(coeff, bool):
            coeff = float(coeff)
        if not isinstance(coeff, (float, Variable)):
            raise TypeError("weight_decay must be a float or a Variable, got %r" % (coeff,))
        self._params_name = set()
        self._apply_decay_param_fun = apply_decay_param_fun
        self._coeff = coeff
        super().__init__(**kwargs)

    def _scale_parameters(self, params_and_grads):
        if isinstance(self._coeff, float) and self._coeff == 0.0:
            return []
        scaled = []
        for param, grad in params_and_grads:
            if grad is None:
                continue
            if self._apply_decay_param_fun is not None and not self._apply_decay_param_fun(param.name):
                continue
            if isinstance(self._coeff, Variable) and self._coeff.dtype != param.dtype:
                raise TypeError("weight_decay variable %s is %s but parameter %s is %s"
                                % (self._coeff.name, self._coeff.dtype, param.name, param.dtype))
            with param.block.program._optimized_guard([param, grad]), name_scope("weight decay"):
                scaled.append((param, grad, param * self._coeff))
                self._params_name.add(param.name)
        return scaled

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
        program = loss.block.program
        with program_guard(program, startup_program or default_startup_program()):
            for param, grad, scaled in self._scale_parameters(params_grads):
                with program._optimized_guard([param, grad]), name_scope("weight decay"):
                    layers.assign(input=layers.elementwise_sub(param, scaled), output=param)
        optimize_ops = self.apply_optimize(loss, startup_program, params_grads)
        return optimize_ops, params_grads

    def __str__(self):
        return " ".join(["Weight Decay, params:", ",".join(sorted(self._params_name))])


def extend_with_decoupled_weight_decay(base_optimizer):
    """AdamW = extend_with_decoupled_weight_decay(fluid.optimizer.Adam); AdamW(weight_decay=0.01, learning_rate=...)"""
    if not (isinstance(base_optimizer, type) and issubclass(base_optimizer, Optimizer)):
        raise TypeError("extend_with_decoupled_weight_decay: base_optimizer must be an Optimizer class, got %r"
                        % (base_optimizer,))

    class OptimizerWithDecoupledWeightDecay(DecoupledWeightDecay, base_optimizer):
        def __init__(self, weight_decay, apply_decay_param_fun=None, **kwargs):
            super().__init__(weight_decay, apply_decay_param_fun, **kwargs)

    OptimizerWithDecoupledWeightDecay.__name__ = base_optimizer.__name__ + "WithDecoupledWeightDecay"
    return OptimizerWithDecoupledWeightDecay
