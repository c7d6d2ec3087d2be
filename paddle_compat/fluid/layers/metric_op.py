"""Metric layers: accuracy, auc (Paddle's op types, outputs and persistable statistics)."""

from ...ir import unique_name
from ..initializer import Constant
from ..layer_helper import LayerHelper
from .arg_checks import check_variable_and_dtype
from .nn.common import topk
from .utils import check_variable, out_var

__all__ = ["accuracy", "auc"]


def accuracy(input, label, k=1, correct=None, total=None):
    """Top-k accuracy over the batch: a [1] float32 (plus int64 correct/total counts)."""
    check_variable_and_dtype(input, "input", ["float16", "float32", "float64"], "accuracy")
    helper = LayerHelper("accuracy")
    _, topk_indices = topk(input, k=k)
    # top_k's values are not needed here, but Paddle feeds them to the accuracy op as `Out`.
    topk_out = helper.main_program.current_block().ops[-1].output("Out")[0]
    acc = out_var(helper, "float32", stop_gradient=True)
    if correct is None:
        correct = out_var(helper, "int64", stop_gradient=True)
    if total is None:
        total = out_var(helper, "int64", stop_gradient=True)
    helper.append_op(type="accuracy", inputs={"Out": [topk_out], "Indices": [topk_indices], "Label": [label]},
                     outputs={"Accuracy": [acc], "Correct": [correct], "Total": [total]})
    return acc


def auc(input, label, curve="ROC", num_thresholds=2 ** 12 - 1, topk=1, slide_steps=1):
    """Bucketed ROC AUC of input[:, -1] (the probability of class 1) against label (0 / non-0).

    Returns (auc_out, batch_auc_out, [batch_stat_pos, batch_stat_neg, stat_pos, stat_neg]): the AUC over
    everything seen since the stats were initialised, the AUC over the last `slide_steps` batches, and
    the persistable int64 bucket counts behind them (Paddle 1.6+ layout: the batch stats hold slide_steps
    per-batch buckets, their running sum, and a batch counter). Run the startup program (or zero the
    stats) to start over. `topk` is accepted and unused, as in Paddle.
    """
    check_variable(input, "input", "auc")
    check_variable(label, "label", "auc")
    if curve not in ("ROC", "PR"):
        raise ValueError("auc: curve must be 'ROC' or 'PR', got %r" % (curve,))
    if int(num_thresholds) < 1 or int(slide_steps) < 0:
        raise ValueError("auc: num_thresholds must be >= 1 and slide_steps >= 0, got %s and %s"
                         % (num_thresholds, slide_steps))
    num_thresholds, slide_steps = int(num_thresholds), int(slide_steps)
    helper = LayerHelper("auc")
    auc_out = out_var(helper, "float64", stop_gradient=True)
    batch_auc_out = out_var(helper, "float64", stop_gradient=True)
    batch_len = (1 + slide_steps) * (num_thresholds + 1) + 1

    def stat(shape):
        v = helper.create_global_variable(name=unique_name.generate_with_ignorable_key(helper.name + ".tmp"),
                                          persistable=True, dtype="int64", shape=shape, stop_gradient=True)
        helper.set_variable_initializer(v, Constant(value=0.0, force_cpu=False))
        return v

    batch_stat_pos, batch_stat_neg = stat([batch_len]), stat([batch_len])
    stat_pos, stat_neg = stat([1, num_thresholds + 1]), stat([1, num_thresholds + 1])
    for out, pos, neg, steps in ((batch_auc_out, batch_stat_pos, batch_stat_neg, slide_steps),
                                 (auc_out, stat_pos, stat_neg, 0)):
        helper.append_op(type="auc", inputs={"Predict": [input], "Label": [label], "StatPos": [pos],
                                             "StatNeg": [neg]},
                         outputs={"AUC": [out], "StatPosOut": [pos], "StatNegOut": [neg]},
                         attrs={"curve": curve, "num_thresholds": num_thresholds, "slide_steps": steps})
    return auc_out, batch_auc_out, [batch_stat_pos, batch_stat_neg, stat_pos, stat_neg]
