"""Weight decay: L1/L2 regularizers append their ops (in the optimize role) and `sum` into the grad."""

from ..ir import VarType, name_scope, unique_name

__all__ = ["L1Decay", "L2Decay", "L1DecayRegularizer", "L2DecayRegularizer", "append_regularization_ops"]


class WeightDecayRegularizer:
    def __call__(self, param, grad, block):
        raise NotImplementedError


class L2DecayRegularizer(WeightDecayRegularizer):
    def __init__(self, regularization_coeff=0.0):
        self._regularization_coeff = float(regularization_coeff)

    def __call__(self, param, grad, block):
        decay = block.create_var(dtype=param.dtype, lod_level=param.lod_level, name=unique_name.generate("l2_decay"))
        block.append_op(type="scale", inputs={"X": [param]}, outputs={"Out": [decay]},
                        attrs={"scale": self._regularization_coeff, "bias": 0.0, "bias_after_scale": True})
        return decay

    def __str__(self):
        return "L2Decay, regularization_coeff=%f" % self._regularization_coeff


class L1DecayRegularizer(WeightDecayRegularizer):
    def __init__(self, regularization_coeff=0.0):
        self._regularization_coeff = float(regularization_coeff)

    def __call__(self, param, grad, block):
        sign = block.create_var(dtype=param.dtype, lod_level=param.lod_level, name=unique_name.generate("l1_sign"))
        decay = block.create_var(dtype=param.dtype, lod_level=param.lod_level, name=unique_name.generate("l1_decay"))
        block.append_op(type="sign", inputs={"X": [param]}, outputs={"Out": [sign]})
        block.append_op(type="scale", inputs={"X": [sign]}, outputs={"Out": [decay]},
                        attrs={"scale": self._regularization_coeff, "bias": 0.0, "bias_after_scale": True})
        return decay

    def __str__(self):
        return "L1Decay, regularization_coeff=%f" % self._regularization_coeff


L1Decay = L1DecayRegularizer
L2Decay = L2DecayRegularizer


def append_regularization_ops(parameters_and_grads, regularization=None):
    """For each (param, grad): grad += regularizer(param). The param's own regularizer wins over the
    optimizer-wide one (Paddle's rule)."""
    out = []
    for param, grad in parameters_and_grads:
        if grad is None:
            out.append((param, grad))
            continue
        prog = param.block.program
        with prog._optimized_guard([param, grad]), name_scope("regularization"):
            reg = getattr(param, "regularizer", None) or regularization
            if reg is None:
                out.append((param, grad))
                continue
            term = reg(param, grad, grad.block)
            new_grad = grad
            if grad.type == VarType.SELECTED_ROWS:
                new_grad = grad.block.create_var(name=grad.name + "@NEWGRAD", dtype=param.dtype,
                                                 lod_level=param.lod_level)
            grad.block.append_op(type="sum", inputs={"X": [grad, term]}, outputs={"Out": [new_grad]})
            out.append((param, new_grad))
    return out
