"""Loss layers (Paddle's op types and output shapes)."""

from ..layer_helper import LayerHelper
from .helpers import append_defined, check_variable, out_var, single

__all__ = ["cross_entropy", "softmax_with_cross_entropy", "square_error_cost",
           "sigmoid_cross_entropy_with_logits", "log_loss", "huber_loss"]

kIgnoreIndex = -100


def cross_entropy(input, label, soft_label=False, ignore_index=kIgnoreIndex):
    """-log(input[label]) per row (input holds probabilities); soft_label: -sum(label * log(input))."""
    check_variable(input, "input", "cross_entropy")
    check_variable(label, "label", "cross_entropy")
    return single(append_defined("cross_entropy", {"X": input, "Label": label},
                                 {"soft_label": soft_label, "ignore_index": ignore_index}), "Y")


def softmax_with_cross_entropy(logits, label, soft_label=False, ignore_index=kIgnoreIndex,
                               numeric_stable_mode=True, return_softmax=False, axis=-1):
    check_variable(logits, "logits", "softmax_with_cross_entropy")
    outs = append_defined("softmax_with_cross_entropy", {"Logits": logits, "Label": label},
                          {"soft_label": soft_label, "ignore_index": ignore_index,
                           "numeric_stable_mode": numeric_stable_mode, "axis": axis})
    loss, softmax = single(outs, "Loss"), single(outs, "Softmax")
    return (loss, softmax) if return_softmax else loss


def square_error_cost(input, label):
    """(input - label)^2, elementwise (Paddle builds it from elementwise_sub and square)."""
    check_variable(input, "input", "square_error_cost")
    check_variable(label, "label", "square_error_cost")
    helper = LayerHelper("square_error_cost")
    minus_out = out_var(helper, input.dtype, input.shape)
    helper.append_op(type="elementwise_sub", inputs={"X": [input], "Y": [label]}, outputs={"Out": [minus_out]},
                     attrs={"axis": -1})
    square_out = out_var(helper, input.dtype, input.shape)
    helper.append_op(type="square", inputs={"X": [minus_out]}, outputs={"Out": [square_out]})
    return square_out


def sigmoid_cross_entropy_with_logits(x, label, ignore_index=kIgnoreIndex, name=None, normalize=False):
    check_variable(x, "x", "sigmoid_cross_entropy_with_logits")
    return single(append_defined("sigmoid_cross_entropy_with_logits", {"X": x, "Label": label},
                                 {"ignore_index": ignore_index, "normalize": normalize}, name=name))


def log_loss(input, label, epsilon=1e-4, name=None):
    return single(append_defined("log_loss", {"Predicted": input, "Labels": label}, {"epsilon": epsilon},
                                 name=name), "Loss")


def huber_loss(input, label, delta):
    helper = LayerHelper("huber_loss")
    residual = out_var(helper, input.dtype, input.shape, stop_gradient=True)
    out = out_var(helper, input.dtype, input.shape)
    helper.append_op(type="huber_loss", inputs={"X": [input], "Y": [label]},
                     outputs={"Out": [out], "Residual": [residual]}, attrs={"delta": float(delta)})
    return out
