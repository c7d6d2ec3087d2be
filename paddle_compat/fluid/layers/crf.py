"""Linear-chain CRF layers (ops in paddle_compat/ops/defs/crf_ops.py): linear_chain_crf, crf_decoding.
Paddle 1.8's signatures, parameter shape and op types."""

from ..layer_helper import LayerHelper
from .helpers import append_defined, check_variable

__all__ = ["linear_chain_crf", "crf_decoding"]


def _lod_only(layer, input, length):
    check_variable(input, "input", layer)
    if length is not None:
        raise NotImplementedError("%s: the length argument (padded input) is not supported; feed LoD sequences"
                                  % layer)
    if input.lod_level < 1:
        raise ValueError("%s: 'input' (%s) has lod_level=0; it must carry sequences (lod_level=1)"
                         % (layer, input.name))


def linear_chain_crf(input, label, param_attr=None, length=None):
    """Negative log-likelihood [N, 1] of each sequence's labels; creates Transition [D + 2, D]."""
    _lod_only("linear_chain_crf", input, length)
    check_variable(label, "label", "linear_chain_crf")
    helper = LayerHelper("linear_chain_crf", param_attr=param_attr)
    size = input.shape[1]
    transition = helper.create_parameter(attr=helper.param_attr, shape=[size + 2, size], dtype=input.dtype)
    outs = append_defined("linear_chain_crf", {"Emission": input, "Transition": transition, "Label": label},
                          helper=helper)
    return outs["LogLikelihood"][0]


def crf_decoding(input, param_attr, label=None, length=None):
    """Viterbi path [T, 1] (int64) under the Transition parameter named by param_attr; with label, 1 where the
    path agrees with it and 0 elsewhere."""
    _lod_only("crf_decoding", input, length)
    helper = LayerHelper("crf_decoding", param_attr=param_attr)
    name = getattr(param_attr, "name", None)
    if name is None:
        raise ValueError("crf_decoding: param_attr must name the Transition parameter of linear_chain_crf "
                         "(fluid.ParamAttr(name=...))")
    transition = helper.get_parameter(name)
    return append_defined("crf_decoding", {"Emission": input, "Transition": transition, "Label": label},
                          helper=helper, stop_gradient=True)["ViterbiPath"][0]
