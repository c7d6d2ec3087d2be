"""dynamic_lstm, dynamic_lstmp, dynamic_gru and gru_unit (Paddle's fluid.layers.rnn)."""

from ....ops.defs.rnn_ops import GRU_UNIT_ACT_IDS
from ...layer_helper import LayerHelper
from ..utils import append_defined, check_variable

__all__ = ["dynamic_lstm", "dynamic_gru", "gru_unit", "dynamic_lstmp"]


_ACT_NAMES = ("sigmoid", "tanh", "relu", "identity")


def _check_act(layer, arg, v):
    if v not in _ACT_NAMES:
        raise ValueError("%s: %s must be one of %s, got %r" % (layer, arg, ", ".join(_ACT_NAMES), v))


def _check_init(layer, arg, v, size):
    if v is None:
        return
    check_variable(v, arg, layer)
    if len(v.shape) != 2 or v.shape[1] != size:
        raise ValueError("%s: %s (%s) must be [batch_size, %d], got %s" % (layer, arg, v.name, size, list(v.shape)))


def _check_width(layer, input, want, size_arg):
    check_variable(input, "input", layer)
    if input.shape[-1] not in (-1, want):
        raise ValueError("%s: input (%s) has width %d but %s needs %d (project it first with fc(size=%d))"
                         % (layer, input.name, input.shape[-1], size_arg, want, want))


def dynamic_lstm(input, size, h_0=None, c_0=None, param_attr=None, bias_attr=None, use_peepholes=True,
                 is_reverse=False, gate_activation='sigmoid', cell_activation='tanh', candidate_activation='tanh',
                 dtype='float32', name=None):
    """LSTM over each sequence of a LoD input already projected to [T, size] (size = 4 * hidden).
    Returns (hidden, cell), both [T, size // 4] with the input's LoD."""
    if size % 4:
        raise ValueError("dynamic_lstm: size must be 4 * hidden size, got %d" % size)
    _check_width("dynamic_lstm", input, size, "size=%d" % size)
    for arg, v in (("gate_activation", gate_activation), ("cell_activation", cell_activation),
                   ("candidate_activation", candidate_activation)):
        _check_act("dynamic_lstm", arg, v)
    hs = size // 4
    _check_init("dynamic_lstm", "h_0", h_0, hs)
    _check_init("dynamic_lstm", "c_0", c_0, hs)
    helper = LayerHelper("lstm", param_attr=param_attr, bias_attr=bias_attr, name=name)
    weight = helper.create_parameter(attr=helper.param_attr, shape=[hs, 4 * hs], dtype=dtype)
    bias = helper.create_parameter(attr=helper.bias_attr, shape=[1, (7 if use_peepholes else 4) * hs], dtype=dtype,
                                   is_bias=True)
    attrs = {"use_peepholes": bool(use_peepholes), "is_reverse": bool(is_reverse),
             "gate_activation": gate_activation, "cell_activation": cell_activation,
             "candidate_activation": candidate_activation}
    outs = append_defined("lstm", {"Input": input, "H0": h_0, "C0": c_0, "Weight": weight, "Bias": bias}, attrs,
                          helper=helper)
    return outs["Hidden"][0], outs["Cell"][0]


def dynamic_gru(input, size, param_attr=None, bias_attr=None, is_reverse=False, gate_activation='sigmoid',
                candidate_activation='tanh', h_0=None, origin_mode=False):
    """GRU over each sequence of a LoD input already projected to [T, 3 * size]. Returns hidden [T, size]."""
    _check_width("dynamic_gru", input, 3 * size, "size=%d" % size)
    _check_act("dynamic_gru", "gate_activation", gate_activation)
    _check_act("dynamic_gru", "candidate_activation", candidate_activation)
    _check_init("dynamic_gru", "h_0", h_0, size)
    helper = LayerHelper("gru", param_attr=param_attr, bias_attr=bias_attr)
    dtype = input.dtype
    weight = helper.create_parameter(attr=helper.param_attr, shape=[size, 3 * size], dtype=dtype)
    bias = helper.create_parameter(attr=helper.bias_attr, shape=[1, 3 * size], dtype=dtype, is_bias=True)
    attrs = {"is_reverse": bool(is_reverse), "gate_activation": gate_activation, "activation": candidate_activation,
             "origin_mode": bool(origin_mode)}
    outs = append_defined("gru", {"Input": input, "H0": h_0, "Weight": weight, "Bias": bias}, attrs, helper=helper)
    return outs["Hidden"][0]


def gru_unit(input, hidden, size, param_attr=None, bias_attr=None, activation='tanh', gate_activation='sigmoid',
             origin_mode=False):
    """One GRU step: input [N, size] (size = 3 * hidden), hidden [N, hidden].
    Returns (updated_hidden, reset_hidden_prev, gate)."""
    if size % 3:
        raise ValueError("gru_unit: size must be 3 * hidden size, got %d" % size)
    _check_width("gru_unit", input, size, "size=%d" % size)
    _check_act("gru_unit", "activation", activation)
    _check_act("gru_unit", "gate_activation", gate_activation)
    hs = size // 3
    _check_init("gru_unit", "hidden", hidden, hs)
    helper = LayerHelper("gru_unit", param_attr=param_attr, bias_attr=bias_attr)
    dtype = input.dtype
    weight = helper.create_parameter(attr=helper.param_attr, shape=[hs, 3 * hs], dtype=dtype)
    bias = None
    if bias_attr is not False:
        bias = helper.create_parameter(attr=helper.bias_attr, shape=[1, 3 * hs], dtype=dtype, is_bias=True)
    # Paddle 1.8 records the activations as integers and (a Paddle bug) always as tanh/sigmoid whatever was
    # asked; we record what was asked, which equals Paddle's for the defaults.
    attrs = {"activation": GRU_UNIT_ACT_IDS[activation], "gate_activation": GRU_UNIT_ACT_IDS[gate_activation],
             "origin_mode": bool(origin_mode)}
    outs = append_defined("gru_unit", {"Input": input, "HiddenPrev": hidden, "Weight": weight, "Bias": bias}, attrs,
                          helper=helper)
    return outs["Hidden"][0], outs["ResetHiddenPrev"][0], outs["Gate"][0]


def dynamic_lstmp(input, size, proj_size, param_attr=None, bias_attr=None, use_peepholes=True, is_reverse=False,
                  gate_activation='sigmoid', cell_activation='tanh', candidate_activation='tanh',
                  proj_activation='tanh', dtype='float32', name=None, h_0=None, c_0=None, cell_clip=None,
                  proj_clip=None):
    """LSTM with a recurrent projection over a LoD input projected to [T, size] (size = 4 * hidden).
    Returns (projection [T, proj_size], cell [T, hidden])."""
    if bias_attr is False:
        raise ValueError("dynamic_lstmp: bias_attr should not be False in dynamic_lstmp.")
    if size % 4:
        raise ValueError("dynamic_lstmp: size must be 4 * hidden size, got %d" % size)
    _check_width("dynamic_lstmp", input, size, "size=%d" % size)
    for arg, v in (("gate_activation", gate_activation), ("cell_activation", cell_activation),
                   ("candidate_activation", candidate_activation), ("proj_activation", proj_activation)):
        _check_act("dynamic_lstmp", arg, v)
    hs = size // 4
    _check_init("dynamic_lstmp", "h_0", h_0, proj_size)
    _check_init("dynamic_lstmp", "c_0", c_0, hs)
    for arg, v in (("cell_clip", cell_clip), ("proj_clip", proj_clip)):
        if v is not None and v < 0:
            raise ValueError("dynamic_lstmp: %s should not be negative, got %r" % (arg, v))
    helper = LayerHelper("lstmp", param_attr=param_attr, bias_attr=bias_attr, name=name)
    weight = helper.create_parameter(attr=helper.param_attr, shape=[proj_size, 4 * hs], dtype=dtype)
    proj_weight = helper.create_parameter(attr=helper.param_attr, shape=[hs, proj_size], dtype=dtype)
    bias = helper.create_parameter(attr=helper.bias_attr, shape=[1, (7 if use_peepholes else 4) * hs], dtype=dtype,
                                   is_bias=True)
    attrs = {"use_peepholes": bool(use_peepholes), "is_reverse": bool(is_reverse),
             "gate_activation": gate_activation, "cell_activation": cell_activation,
             "candidate_activation": candidate_activation, "proj_activation": proj_activation,
             "cell_clip": float(cell_clip or 0.0), "proj_clip": float(proj_clip or 0.0)}
    outs = append_defined("lstmp", {"Input": input, "H0": h_0, "C0": c_0, "Weight": weight,
                                    "ProjWeight": proj_weight, "Bias": bias}, attrs, helper=helper)
    return outs["Projection"][0], outs["Cell"][0]
