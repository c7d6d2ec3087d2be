"""RNN cells and layers.rnn: RNNCell, GRUCell, LSTMCell, rnn, lstm_unit, lstm (Paddle's fluid.layers.rnn)."""

import functools

import copy

from ....ir import VarType, convert_dtype, unique_name
from ...layer_helper import LayerHelper
from ...param_attr import ParamAttr
from ..control_flow.rnn_blocks import StaticRNN
from ..nn.common import fc, matmul, split, transpose
from ..nn.math import elementwise_add, elementwise_mul
from ..nn.shape_ops import shape
from ..ops import sigmoid, tanh
from ..sequence_lod import sequence_mask
from ..tensor import concat, fill_constant, fill_constant_batch_size_like, reverse as _reverse
from ..utils import check_variable

__all__ = ["RNNCell", "GRUCell", "LSTMCell", "rnn", "lstm_unit", "lstm"]


def _is_seq(x):
    return isinstance(x, (list, tuple))


def _flatten(s):
    if _is_seq(s):
        return [v for item in s for v in _flatten(item)]
    return [s]


def _pack_as(structure, flat):
    it = iter(flat)

    def pack(s):
        if _is_seq(s):
            return type(s)(pack(x) for x in s)
        return next(it)
    return pack(structure)


def _map(fn, *structs):
    flats = [_flatten(s) for s in structs]
    for f in flats[1:]:
        if len(f) != len(flats[0]):
            raise ValueError("rnn: the cell returned states of another structure (%d values) than it was "
                             "given (%d values)" % (len(f), len(flats[0])))
    return _pack_as(structs[0], [fn(*vals) for vals in zip(*flats)])


def _check_float(v, arg, layer):
    check_variable(v, arg, layer)
    if convert_dtype(v.dtype) not in (VarType.FP32, VarType.FP64):
        raise TypeError("%s: %s (%s) must be float32 or float64, got %s" % (layer, arg, v.name, v.dtype))


class RNNCell:
    """Base class: `call(inputs, states) -> (outputs, new_states)` and `state_shape`."""

    def call(self, inputs, states, **kwargs):
        raise NotImplementedError("RNNCell must implent the call function.")

    def __call__(self, inputs, states, **kwargs):
        return self.call(inputs, states, **kwargs)

    def get_initial_states(self, batch_ref, shape=None, dtype="float32", init_value=0, batch_dim_idx=0):
        batch_ref = _flatten(batch_ref)[0]
        check_variable(batch_ref, "batch_ref", "RNNCell")
        shapes = self.state_shape if shape is None else shape

        def is_shape(s):
            return _is_seq(s) and all(isinstance(d, int) for d in s)

        def build(s):
            if is_shape(s):
                full = list(s) if s and s[0] == -1 else [-1] + list(s)
                return fill_constant_batch_size_like(input=batch_ref, shape=full, dtype=dtype,
                                                            value=init_value, input_dim_idx=batch_dim_idx)
            return type(s)(build(x) for x in s)
        return build(shapes)

    @property
    def state_shape(self):
        raise NotImplementedError("Please add implementaion for `state_shape` in the used cell.")

    @property
    def state_dtype(self):
        raise NotImplementedError("Please add implementaion for `state_dtype` in the used cell.")


def _suffixed(attr, suffix):
    if attr is None or attr is False:
        return attr
    attr = ParamAttr._to_attr(attr)
    if attr.name is None:
        return attr
    attr = copy.deepcopy(attr)
    attr.name += suffix
    return attr


class _Unit:
    """Parameters created on first call, named like Paddle's dygraph Layer (`<scope>/<Class>_<k>.w_<j>`)."""

    def __init__(self, name_scope, cls_name):
        self.full_name = unique_name.generate(name_scope + "/" + cls_name)
        self.built = False

    def param(self, attr, shape, dtype, is_bias=False):
        helper = LayerHelper(self.full_name, param_attr=attr, bias_attr=attr)
        a = copy.deepcopy(ParamAttr._to_attr(attr) if attr is not None else ParamAttr())
        if a.name is None:
            a.name = unique_name.generate(self.full_name + (".b" if is_bias else ".w"))
        return helper.create_parameter(attr=a, shape=shape, dtype=dtype, is_bias=is_bias)


class BasicGRUUnit:
    """One GRU step, Paddle's contrib BasicGRUUnit: [r, u] = gate_act([x, h] W_g + b_g),
    h' = u * h + (1 - u) * act([x, r * h] W_c + b_c). Parameters (created on the first call): gate weight
    [I + H, 2H], candidate weight [I + H, H], their biases."""

    def __init__(self, name_scope, hidden_size, param_attr=None, bias_attr=None, gate_activation=None,
                 activation=None, dtype="float32"):
        self.unit = _Unit(name_scope, "BasicGRUUnit")
        self.hidden_size, self.param_attr, self.bias_attr, self.dtype = hidden_size, param_attr, bias_attr, dtype
        self.gate_activation = gate_activation or sigmoid
        self.activation = activation or tanh

    def _build(self, input_size):
        u, h, d = self.unit, self.hidden_size, self.dtype
        self.gate_w = u.param(_suffixed(self.param_attr, "_gate"), [input_size + h, 2 * h], d)
        self.cand_w = u.param(_suffixed(self.param_attr, "_candidate"), [input_size + h, h], d)
        self.gate_b = u.param(_suffixed(self.bias_attr, "_gate"), [2 * h], d, is_bias=True)
        self.cand_b = u.param(_suffixed(self.bias_attr, "_candidate"), [h], d, is_bias=True)
        u.built = True

    def __call__(self, input, pre_hidden):
        if not self.unit.built:
            self._build(input.shape[-1])
        gate = matmul(concat([input, pre_hidden], 1), self.gate_w)
        gate = self.gate_activation(elementwise_add(gate, self.gate_b))
        r, u = split(gate, num_or_sections=2, dim=1)
        cand = matmul(concat([input, r * pre_hidden], 1), self.cand_w)
        c = self.activation(elementwise_add(cand, self.cand_b))
        return u * pre_hidden + (1 - u) * c


class BasicLSTMUnit:
    """One LSTM step, Paddle's contrib BasicLSTMUnit: gates i, j, f, o = split([x, h] W + b);
    c' = c * sigmoid(f + forget_bias) + sigmoid(i) * tanh(j); h' = tanh(c') * sigmoid(o). Parameters
    (created on the first call): weight [I + H, 4H], bias [4H]."""

    def __init__(self, name_scope, hidden_size, param_attr=None, bias_attr=None, gate_activation=None,
                 activation=None, forget_bias=1.0, dtype="float32"):
        self.unit = _Unit(name_scope, "BasicLSTMUnit")
        self.hidden_size, self.param_attr, self.bias_attr, self.dtype = hidden_size, param_attr, bias_attr, dtype
        # Paddle's unit takes these but always applies sigmoid/tanh (BasicLSTMUnit.forward); so do we
        self.gate_activation = gate_activation or sigmoid
        self.activation = activation or tanh
        self.forget_bias = fill_constant([1], dtype=dtype, value=forget_bias)
        self.forget_bias.stop_gradient = False

    def __call__(self, input, pre_hidden, pre_cell):
        if not self.unit.built:
            h = self.hidden_size
            self.weight = self.unit.param(self.param_attr, [input.shape[-1] + h, 4 * h], self.dtype)
            self.bias = self.unit.param(self.bias_attr, [4 * h], self.dtype, is_bias=True)
            self.unit.built = True
        gate = elementwise_add(matmul(concat([input, pre_hidden], 1), self.weight), self.bias)
        i, j, f, o = split(gate, num_or_sections=4, dim=-1)
        new_cell = elementwise_add(
            elementwise_mul(pre_cell, sigmoid(elementwise_add(f, self.forget_bias))),
            elementwise_mul(sigmoid(i), tanh(j)))
        return tanh(new_cell) * sigmoid(o), new_cell


class GRUCell(RNNCell):
    """A BasicGRUUnit as an RNNCell (state: hidden [N, H])."""

    def __init__(self, hidden_size, param_attr=None, bias_attr=None, gate_activation=None, activation=None,
                 dtype="float32", name="GRUCell"):
        if not isinstance(hidden_size, int):
            raise TypeError("GRUCell: hidden_size must be an int, got %r" % (hidden_size,))
        self.hidden_size = hidden_size
        self.gru_unit = BasicGRUUnit(name, hidden_size, param_attr, bias_attr, gate_activation, activation, dtype)

    def call(self, inputs, states):
        _check_float(inputs, "inputs", "GRUCell")
        _check_float(states, "states", "GRUCell")
        new_hidden = self.gru_unit(inputs, states)
        return new_hidden, new_hidden

    @property
    def state_shape(self):
        return [self.hidden_size]


class LSTMCell(RNNCell):
    """A BasicLSTMUnit as an RNNCell (states: [hidden, cell], each [N, H])."""

    def __init__(self, hidden_size, param_attr=None, bias_attr=None, gate_activation=None, activation=None,
                 forget_bias=1.0, dtype="float32", name="LSTMCell"):
        if not isinstance(hidden_size, int):
            raise TypeError("LSTMCell: hidden_size must be an int, got %r" % (hidden_size,))
        self.hidden_size = hidden_size
        self.lstm_unit = BasicLSTMUnit(name, hidden_size, param_attr, bias_attr, gate_activation, activation,
                                       forget_bias, dtype)

    def call(self, inputs, states):
        _check_float(inputs, "inputs", "LSTMCell")
        if not isinstance(states, list) or len(states) != 2:
            raise TypeError("LSTMCell: states must be a list [hidden, cell], got %r" % (states,))
        new_hidden, new_cell = self.lstm_unit(inputs, states[0], states[1])
        return new_hidden, [new_hidden, new_cell]

    @property
    def state_shape(self):
        return [[self.hidden_size], [self.hidden_size]]


def rnn(cell, inputs, initial_states=None, sequence_length=None, time_major=False, is_reverse=False, **kwargs):
    """Runs `cell` over the time steps of `inputs` ([N, T, ...], or [T, N, ...] with time_major) in a
    StaticRNN; with sequence_length, states stop changing past each sequence's end (outputs there are
    whatever the cell gives, as in Paddle). Returns (outputs, final_states)."""
    if not isinstance(cell, RNNCell):
        raise TypeError("rnn: cell must be an RNNCell, got %r" % (cell,))
    for i, x in enumerate(_flatten(inputs)):
        _check_float(x, "inputs[%d]" % i, "rnn")
    if sequence_length is not None:
        check_variable(sequence_length, "sequence_length", "rnn")

    def maybe_copy(state, new_state, step_mask):
        return elementwise_mul(new_state, step_mask, axis=0) - \
            elementwise_mul(state, (step_mask - 1), axis=0)

    def batch_time(x):
        return transpose(x, [1, 0] + list(range(2, len(x.shape))))

    def switch_grad(x):
        x.stop_gradient = False
        return x

    if initial_states is None:
        initial_states = cell.get_initial_states(batch_ref=inputs, batch_dim_idx=1 if time_major else 0)
    initial_states = _map(switch_grad, initial_states)
    if not time_major:
        inputs = _map(batch_time, inputs)
    mask = None
    if sequence_length is not None:
        max_seq_len = shape(_flatten(inputs)[0])[0]
        mask = sequence_mask(sequence_length, maxlen=max_seq_len, dtype=_flatten(initial_states)[0].dtype)
        mask = transpose(mask, [1, 0])
    if is_reverse:
        inputs = _map(lambda x: _reverse(x, axis=[0]), inputs)
        mask = _reverse(mask, axis=[0]) if mask is not None else None
    srnn = StaticRNN()
    with srnn.step():
        inputs = _map(srnn.step_input, inputs)
        states = _map(srnn.memory, initial_states)
        outputs, new_states = cell.call(inputs, _map(lambda x: x, states), **kwargs)
        if len(_flatten(new_states)) != len(_flatten(states)):
            raise ValueError("rnn: the cell returned %d states for %d given"
                             % (len(_flatten(new_states)), len(_flatten(states))))
        if mask is not None:
            step_mask = srnn.step_input(mask)
            new_states = _map(functools.partial(maybe_copy, step_mask=step_mask), states, new_states)
        _map(srnn.update_memory, states, new_states)
        flat_outputs = _flatten(outputs)
        _map(srnn.step_output, outputs)
        _map(srnn.step_output, new_states)
    rnn_out = srnn()
    rnn_out = rnn_out if isinstance(rnn_out, list) else [rnn_out]
    final_outputs = _pack_as(outputs, rnn_out[:len(flat_outputs)])
    final_states = _pack_as(new_states, [x[-1] for x in rnn_out[len(flat_outputs):]])
    if is_reverse:
        final_outputs = _map(lambda x: _reverse(x, axis=[0]), final_outputs)
    if not time_major:
        final_outputs = _map(batch_time, final_outputs)
    return final_outputs, final_states


def lstm_unit(x_t, hidden_t_prev, cell_t_prev, forget_bias=0.0, param_attr=None, bias_attr=None, name=None):
    """One LSTM step: fc([x_t, h_prev]) -> [N, 4H] gates i, f, o, g, then Paddle's lstm_unit op.
    Returns (h, c)."""
    for v, n in ((x_t, "x_t"), (hidden_t_prev, "hidden_t_prev"), (cell_t_prev, "cell_t_prev")):
        _check_float(v, n, "lstm_unit")
        if len(v.shape) != 2:
            raise ValueError("lstm_unit: %s (%s) must have rank 2, got shape %s" % (n, v.name, list(v.shape)))
    if x_t.shape[0] != hidden_t_prev.shape[0] or x_t.shape[0] != cell_t_prev.shape[0]:
        raise ValueError("The 1st dimensions of x_t, hidden_t_prev and cell_t_prev must be the same.")
    if hidden_t_prev.shape[1] != cell_t_prev.shape[1]:
        raise ValueError("The 2nd dimensions of hidden_t_prev and cell_t_prev must be the same.")
    if bias_attr is None:
        bias_attr = ParamAttr()
    size = cell_t_prev.shape[1]
    fc_out = fc(input=concat(input=[x_t, hidden_t_prev], axis=1), size=4 * size,
                   param_attr=param_attr, bias_attr=bias_attr)
    helper = LayerHelper("lstm_unit", name=name)
    c = helper.create_variable_for_type_inference(x_t.dtype)
    h = helper.create_variable_for_type_inference(x_t.dtype)
    helper.append_op(type="lstm_unit", inputs={"X": [fc_out], "C_prev": [cell_t_prev]},
                     outputs={"C": [c], "H": [h]}, attrs={"forget_bias": float(forget_bias)})
    return h, c


def lstm(input, init_h, init_c, max_len, hidden_size, num_layers, dropout_prob=0.0, is_bidirec=False,
         is_test=False, name=None, default_initializer=None, seed=-1):
    """Paddle 1.8's cuDNN LSTM over a padded time-major input [T, N, I]: one flat weight parameter in cuDNN's
    layout (see ops/defs/cudnn_lstm_ops.py). Returns (out [T, N, H * dirs], last_h, last_c
    [num_layers * dirs, N, H])."""
    for v, n in ((input, "input"), (init_h, "init_h"), (init_c, "init_c")):
        _check_float(v, n, "lstm")
    for v, n in ((max_len, "max_len"), (hidden_size, "hidden_size"), (num_layers, "num_layers")):
        if not isinstance(v, int):
            raise TypeError("lstm: %s must be an int, got %r" % (n, v))
    helper = LayerHelper("cudnn_lstm", name=name)
    input_size = input.shape[-1]
    dirs = 2 if is_bidirec else 1
    weight_size = 0
    for i in range(num_layers):
        in_l = input_size if i == 0 else hidden_size * dirs
        weight_size += dirs * (4 * hidden_size * (in_l + hidden_size) + 8 * hidden_size)
    weight = helper.create_parameter(attr=helper.param_attr, shape=[weight_size], dtype=input.dtype,
                                     default_initializer=default_initializer)
    # shapes: the op's infer_shape's, as Paddle's InferShape gave them at build time ([T, N, H * dirs], ...)
    out, last_h, last_c = (helper.create_variable_for_type_inference(input.dtype) for _ in range(3))
    cache = helper.create_variable(name=unique_name.generate(helper.name + ".cache"), persistable=True,
                                   type=VarType.RAW, stop_gradient=True)
    helper.append_op(type="cudnn_lstm", inputs={"Input": [input], "InitH": [init_h], "InitC": [init_c],
                                                "W": [weight], "Cache": [cache]},
                     outputs={"Out": [out], "last_h": [last_h], "last_c": [last_c]},
                     attrs={"max_len": max_len, "is_bidirec": bool(is_bidirec), "input_size": input_size,
                            "hidden_size": hidden_size, "num_layers": num_layers, "is_test": bool(is_test),
                            "dropout_prob": float(dropout_prob), "seed": seed})
    return out, last_h, last_c
