"""Metric layers."""

from ..layer_helper import LayerHelper
from .helpers import out_var
from .nn import topk

__all__ = ["accuracy"]


def accuracy(input, label, k=1, correct=None, total=None):
    """Top-k accuracy over the batch: a [1] float32 (plus int64 correct/total counts)."""
    helper = LayerHelper("accuracy")
    _, topk_indices = topk(input, k=k)
    # top_k's values are not needed here, but Paddle feeds them to the accuracy op as `Out`.
    topk_out = helper.main_program.current_block().ops[-1].output("Out")[0]
    acc = out_var(helper, "float32", [1], stop_gradient=True)
    if correct is None:
        correct = out_var(helper, "int64", [1], stop_gradient=True)
    if total is None:
        total = out_var(helper, "int64", [1], stop_gradient=True)
    helper.append_op(type="accuracy", inputs={"Out": [topk_out], "Indices": [topk_indices], "Label": [label]},
                     outputs={"Accuracy": [acc], "Correct": [correct], "Total": [total]})
    return acc
