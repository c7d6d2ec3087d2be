"""contrib's BasicGRUUnit / BasicLSTMUnit (one step, built from ordinary layers) and basic_gru / basic_lstm
(stacked, optionally bidirectional recurrences over [batch, time, dim], one fused op each: basic_gru /
basic_lstm in paddle_compat/ops/defs/contrib_more_ops.py). Parameters, their shapes, order and names follow
Paddle 1.8, so checkpoints carry over. Here the units are plain static-graph objects, not dygraph Layers."""

import copy

from ... import layers, unique_name
from ...layer_helper import LayerHelper
from ...layers.helpers import append_defined, check_variable

__all__ = ["BasicGRUUnit", "BasicLSTMUnit", "basic_gru", "basic_lstm"]


def _suffixed(attr, suffix):
    if attr is not None and getattr(attr, "name", None) is not None:
        attr = copy.deepcopy(attr)
        attr.name += suffix
    return attr


def _act_name(fn, default, what):
    if fn is None:
        return default
    name = getattr(fn, "__name__", None)
    from ...ops.defs.contrib_more_ops import _ACTS
    if name in _ACTS and getattr(layers, name, None) is fn:
        return name
    raise NotImplementedError("%s: %r is not one of fluid.layers' %s" % (what, fn, ", ".join(sorted(_ACTS))))


class _Unit(object):
    def __init__(self, kind, name_scope, hidden_size, param_attr, bias_attr, dtype):
        self._helper = LayerHelper(kind, name=unique_name.generate(name_scope + "/" + kind))
        self._hidden = hidden_size
        self._param_attr, self._bias_attr, self._dtype = param_attr, bias_attr, dtype
        self._built = False

    def _param(self, attr, shape, is_bias):
        from ...param_attr import ParamAttr
        return self._helper.create_parameter(attr=ParamAttr._to_attr(copy.deepcopy(attr)), shape=shape,
                                             dtype=self._dtype, is_bias=is_bias)

    def __call__(self, *args):
        if not self._built:
            self._build(args[0].shape[-1])
            self._built = True
        return self.forward(*args)


class BasicGRUUnit(_Unit):
    """One GRU step: gates = gate_activation([x, h] W_g + b_g) split into r, u; c = activation([x, r * h] W_c +
    b_c); h' = u * h + (1 - u) * c."""

    def __init__(self, name_scope, hidden_size, param_attr=None, bias_attr=None, gate_activation=None,
                 activation=None, dtype="float32"):
        super().__init__("BasicGRUUnit", name_scope, hidden_size, param_attr, bias_attr, dtype)
        self._gate_activation = gate_activation or layers.sigmoid
        self._activation = activation or layers.tanh

    def _build(self, input_size):
        h = self._hidden
        self._gate_weight = self._param(_suffixed(self._param_attr, "_gate"), [input_size + h, 2 * h], False)
        self._candidate_weight = self._param(_suffixed(self._param_attr, "_candidate"), [input_size + h, h], False)
        self._gate_bias = self._param(_suffixed(self._bias_attr, "_gate"), [2 * h], True)
        self._candidate_bias = self._param(_suffixed(self._bias_attr, "_candidate"), [h], True)

    def weights(self):
        return [self._gate_weight, self._candidate_weight, self._gate_bias, self._candidate_bias]

    def forward(self, input, pre_hidden):
        g = self._gate_activation(layers.elementwise_add(
            layers.matmul(layers.concat([input, pre_hidden], 1), self._gate_weight), self._gate_bias))
        r, u = layers.split(g, num_or_sections=2, dim=1)
        c = self._activation(layers.elementwise_add(
            layers.matmul(layers.concat([input, r * pre_hidden], 1), self._candidate_weight), self._candidate_bias))
        return u * pre_hidden + (1 - u) * c


class BasicLSTMUnit(_Unit):
    """One LSTM step: [x, h] W + b split into i, j, f, o; c' = c * sigmoid(f + forget_bias) + sigmoid(i) *
    tanh(j); h' = tanh(c') * sigmoid(o) (sigmoid and tanh whatever gate_activation / activation say, as in
    Paddle 1.8)."""

    def __init__(self, name_scope, hidden_size, param_attr=None, bias_attr=None, gate_activation=None,
                 activation=None, forget_bias=1.0, dtype="float32"):
        super().__init__("BasicLSTMUnit", name_scope, hidden_size, param_attr, bias_attr, dtype)
        self._forget_bias = float(forget_bias)

    def _build(self, input_size):
        h = self._hidden
        self._weight = self._param(self._param_attr, [input_size + h, 4 * h], False)
        self._bias = self._param(self._bias_attr, [4 * h], True)

    def weights(self):
        return [self._weight, self._bias]

    def forward(self, input, pre_hidden, pre_cell):
        gates = layers.elementwise_add(layers.matmul(layers.concat([input, pre_hidden], 1), self._weight), self._bias)
        i, j, f, o = layers.split(gates, num_or_sections=4, dim=-1)
        new_cell = layers.elementwise_add(
            layers.elementwise_mul(pre_cell, layers.sigmoid(layers.scale(f, bias=self._forget_bias))),
            layers.elementwise_mul(layers.sigmoid(i), layers.tanh(j)))
        return layers.tanh(new_cell) * layers.sigmoid(o), new_cell


def _units(make, name, num_layers, bidirectional, param_attr, bias_attr, input_size, hidden_size):
    units = []
    for tag, scope in (("fw", "_layers_"), ("bw", "_reverse_layers_"))[:2 if bidirectional else 1]:
        for i in range(num_layers):
            u = make(name + scope + str(i), _suffixed(param_attr, "_%s_w_%d" % (tag, i)),
                     _suffixed(bias_attr, "_%s_b_%d" % (tag, i)))
            u._build(input_size if i == 0 else hidden_size)
            u._built = True
            units.append(u)
    return units


def _rnn(op_type, input, inits, hidden_size, num_layers, sequence_length, dropout_prob, bidirectional,
         batch_first, units, extra_attrs):
    ws = [w for u in units for w in u.weights()]
    ins = {"Input": input, "SequenceLength": sequence_length, "Weight": ws}
    ins.update(inits)
    attrs = {"hidden_size": hidden_size, "num_layers": num_layers, "bidirectional": bool(bidirectional),
             "batch_first": bool(batch_first), "dropout_prob": float(dropout_prob or 0.0), "is_test": False}
    attrs.update(extra_attrs)
    return append_defined(op_type, ins, attrs)


def basic_gru(input, init_hidden, hidden_size, num_layers=1, sequence_length=None, dropout_prob=0.0,
              bidirectional=False, batch_first=True, param_attr=None, bias_attr=None, gate_activation=None,
              activation=None, dtype="float32", name="basic_gru"):
    """A stacked GRU over input [batch, time, dim] (batch_first) or [time, batch, dim]: returns (out
    [.., hidden_size * directions], last_hidden [num_layers * directions, batch, hidden_size]). Steps past a
    sequence's length (sequence_length) carry the previous state; dropout follows every layer."""
    check_variable(input, "input", "basic_gru")
    attrs = {"gate_activation": _act_name(gate_activation, "sigmoid", "basic_gru gate_activation"),
             "activation": _act_name(activation, "tanh", "basic_gru activation")}
    units = _units(lambda scope, pa, ba: BasicGRUUnit(scope, hidden_size, pa, ba, gate_activation, activation,
                                                      dtype),
                   name, num_layers, bidirectional, param_attr, bias_attr, input.shape[-1], hidden_size)
    outs = _rnn("basic_gru", input, {"InitH": init_hidden}, hidden_size, num_layers, sequence_length, dropout_prob,
                bidirectional, batch_first, units, attrs)
    return outs["Out"][0], outs["LastH"][0]


def basic_lstm(input, init_hidden, init_cell, hidden_size, num_layers=1, sequence_length=None, dropout_prob=0.0,
               bidirectional=False, batch_first=True, param_attr=None, bias_attr=None, gate_activation=None,
               activation=None, forget_bias=1.0, dtype="float32", name="basic_lstm"):
    """A stacked LSTM (see basic_gru): returns (out, last_hidden, last_cell)."""
    check_variable(input, "input", "basic_lstm")
    units = _units(lambda scope, pa, ba: BasicLSTMUnit(scope, hidden_size, pa, ba, gate_activation, activation,
                                                       forget_bias, dtype),
                   name, num_layers, bidirectional, param_attr, bias_attr, input.shape[-1], hidden_size)
    outs = _rnn("basic_lstm", input, {"InitH": init_hidden, "InitC": init_cell}, hidden_size, num_layers,
                sequence_length, dropout_prob, bidirectional, batch_first, units, {"forget_bias": float(forget_bias)})
    return outs["Out"][0], outs["LastH"][0], outs["LastC"][0]
