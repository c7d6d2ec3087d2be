"""fluid.contrib.layers basic_gru / basic_lstm (multi-layer, optionally bidirectional, on StaticRNN) and their
step units BasicGRUUnit / BasicLSTMUnit, in Paddle 1.8's form: one unit per layer and direction, named
"<name>_layers_<i>" ("<name>_reverse_layers_<i>" backward), the same op sequence and the same packing of the
last states ([num_layers * directions, N, H])."""

import copy

from ... import layers
from ...layers.rnn.cells import BasicGRUUnit, BasicLSTMUnit
from ...layers.control_flow import StaticRNN

__all__ = ["BasicGRUUnit", "basic_gru", "BasicLSTMUnit", "basic_lstm"]


def _named(attr, suffix):
    if attr is not None and getattr(attr, "name", None) is not None:
        attr = copy.deepcopy(attr)
        attr.name += suffix
    return attr


def _units(make, name, num_layers, bidirectional, param_attr, bias_attr, bw_bias_falls_back=False):
    fw = [make(name + "_layers_" + str(i), _named(param_attr, "_fw_w_" + str(i)), _named(bias_attr, "_fw_b_" + str(i)))
          for i in range(num_layers)]
    bw = []
    if bidirectional:
        for i in range(num_layers):
            b = _named(bias_attr, "_bw_b_" + str(i))
            if bw_bias_falls_back and (bias_attr is None or getattr(bias_attr, "name", None) is None):
                b = param_attr   # Paddle 1.8.5's basic_lstm gives its backward units param_attr as bias_attr
            bw.append(make(name + "_reverse_layers_" + str(i), _named(param_attr, "_bw_w_" + str(i)), b))
    return fw, bw


def _run(input, units_fw, units_bw, inits, hidden_size, num_layers, sequence_length, dropout_prob, batch_first,
         lstm):
    """Shared body: inits = the initial states ([layers * dirs, N, H] each, one per state kind) or None."""
    if batch_first:
        input = layers.transpose(input, [1, 0, 2])
    mask = None
    if sequence_length is not None:
        mask = layers.sequence_mask(sequence_length, maxlen=layers.shape(input)[0], dtype="float32")
        mask = layers.transpose(mask, [1, 0])
    n_state = 2 if lstm else 1
    dirs = 2 if units_bw else 1
    states = [None] * n_state
    if inits is not None:
        states = [layers.reshape(v, shape=[num_layers, dirs, -1, hidden_size]) for v in inits]

    def one_direction(rnn_input, units, mask, d):
        rnn = StaticRNN()
        with rnn.step():
            step_input = rnn.step_input(rnn_input)
            step_mask = rnn.step_input(mask) if mask is not None else None
            for i in range(num_layers):
                if states[0] is not None:
                    pre = [rnn.memory(init=s[i, d]) for s in states]
                elif lstm:
                    pre = [rnn.memory(batch_ref=rnn_input, shape=[-1, hidden_size]) for _ in range(n_state)]
                else:
                    pre = [rnn.memory(batch_ref=rnn_input, shape=[-1, hidden_size], ref_batch_dim_idx=1)]
                new = list(units[i](step_input, *pre)) if lstm else [units[i](step_input, *pre)]
                if step_mask is not None:
                    new = [layers.elementwise_mul(n, step_mask, axis=0) - layers.elementwise_mul(p, (step_mask - 1),
                                                                                               axis=0)
                           for n, p in zip(new, pre)]
                for p, n in zip(pre, new):
                    rnn.update_memory(p, n)
                for n in new:
                    rnn.step_output(n)
                step_input = new[0]
                if dropout_prob is not None and dropout_prob > 0.0:
                    step_input = layers.dropout(step_input, dropout_prob=dropout_prob,
                                                **({"dropout_implementation": "upscale_in_train"} if lstm else {}))
            rnn.step_output(step_input)
        out = rnn()
        last_steps = [[out[i * n_state + k][-1] for k in range(n_state)] for i in range(num_layers)]
        lasts = [layers.reshape(layers.concat([ls[k] for ls in last_steps], axis=0),
                                shape=[num_layers, -1, hidden_size]) for k in range(n_state)]
        return out[-1], lasts

    out, lasts = one_direction(input, units_fw, mask, 0)
    if units_bw:
        bw_mask = layers.reverse(mask, axis=[0]) if mask is not None else None
        bw_out, bw_lasts = one_direction(layers.reverse(input, axis=[0]), units_bw, bw_mask, 1)
        out = layers.concat([out, layers.reverse(bw_out, axis=[0])], axis=2)
        lasts = [layers.reshape(layers.concat([f, b], axis=1), shape=[num_layers * 2, -1, hidden_size])
                 for f, b in zip(lasts, bw_lasts)]
    if batch_first:
        out = layers.transpose(out, [1, 0, 2])
    return [out] + lasts


def basic_gru(input, init_hidden, hidden_size, num_layers=1, sequence_length=None, dropout_prob=0.0,
              bidirectional=False, batch_first=True, param_attr=None, bias_attr=None, gate_activation=None,
              activation=None, dtype="float32", name="basic_gru"):
    """Returns (rnn_out [N, T, H * dirs] (time-major without batch_first), last_hidden [layers * dirs, N, H])."""
    fw, bw = _units(lambda n, p, b: BasicGRUUnit(n, hidden_size, p, b, gate_activation, activation, dtype),
                    name, num_layers, bidirectional, param_attr, bias_attr)
    out, last = _run(input, fw, bw, None if init_hidden is None else [init_hidden], hidden_size, num_layers,
                     sequence_length, dropout_prob, batch_first, lstm=False)
    return out, last


def basic_lstm(input, init_hidden, init_cell, hidden_size, num_layers=1, sequence_length=None, dropout_prob=0.0,
               bidirectional=False, batch_first=True, param_attr=None, bias_attr=None, gate_activation=None,
               activation=None, forget_bias=1.0, dtype="float32", name="basic_lstm"):
    """Returns (rnn_out, last_hidden, last_cell) as basic_gru, with the cell states too."""
    fw, bw = _units(lambda n, p, b: BasicLSTMUnit(n, hidden_size, param_attr=p, bias_attr=b,
                                                  gate_activation=gate_activation, activation=activation,
                                                  forget_bias=forget_bias, dtype=dtype),
                    name, num_layers, bidirectional, param_attr, bias_attr, bw_bias_falls_back=True)
    inits = None if init_hidden is None else [init_hidden, init_cell]
    return tuple(_run(input, fw, bw, inits, hidden_size, num_layers, sequence_length, dropout_prob, batch_first,
                      lstm=True))
