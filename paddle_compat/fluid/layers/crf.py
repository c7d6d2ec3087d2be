"""Linear-chain CRF layers (ops in paddle_compat/ops/defs/crf_ops.py): linear_chain_crf, crf_decoding.
Paddle 1.8's signatures, parameter shape and op types."""

from ..layer_helper import LayerHelper
from .helpers import append_defined, check_variable

__all__ = ["linear_chain_crf", "crf_decoding"]


def _check_input(layer, input, length):
    """LoD sequences [T, D], or padded [N, L, D] with length. (A LoD-less input without length builds, as in
    Paddle; running it fails, naming the variable.)"""
    check_variable(input, "input", layer)
    if length is not None:
        check_variable(length, "length", layer)
        if len(input.shape) != 3:
            raise ValueError("%s: with length, 'input' (%s) must be padded [N, L, D], got %s"
                             % (layer, input.name, list(input.shape)))


def linear_chain_crf(input, label, param_attr=None, length=None):
    """Negative log-likelihood [N, 1] of each sequence's labels (LoD input, or padded [N, L, D] with length [N]);
    creates Transition [D + 2, D]."""
    _check_input("linear_chain_crf", input, length)
    check_variable(label, "label", "linear_chain_crf")
    helper = LayerHelper("linear_chain_crf", param_attr=param_attr)
    size = input.shape[-1]
    transition = helper.create_parameter(attr=helper.param_attr, shape=[size + 2, size], dtype=input.dtype)
    outs = append_defined("linear_chain_crf", {"Emission": input, "Transition": transition, "Label": label,
                                               "Length": length}, helper=helper)
    return outs["LogLikelihood"][0]


def crf_decoding(input, param_attr, label=None, length=None):
    """Viterbi path [T, 1] (int64; [N, L] for padded input with length, 0 past each length) under the
    Transition parameter named by param_attr; with label, 1 where the path agrees with it and 0 elsewhere."""
    _check_input("crf_decoding", input, length)
    helper = LayerHelper("crf_decoding", param_attr=param_attr)
    name = getattr(param_attr, "name", None)
    if name is None:
        raise ValueError("crf_decoding: param_attr must name the Transition parameter of linear_chain_crf "
                         "(fluid.ParamAttr(name=...))")
    transition = helper.get_parameter(name)
    return append_defined("crf_decoding", {"Emission": input, "Transition": transition, "Label": label,
                                           "Length": length}, helper=helper, stop_gradient=True)["ViterbiPath"][0]
