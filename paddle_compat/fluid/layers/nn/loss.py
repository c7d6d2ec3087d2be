"""The losses Paddle keeps in fluid.layers.nn: smooth_l1, dice_loss, log_loss."""

from ...layer_helper import LayerHelper
from ..utils import append_defined, single
from .common import one_hot
from .math import reduce_mean, reduce_sum

__all__ = ["log_loss", "smooth_l1", "dice_loss"]


def log_loss(input, label, epsilon=1e-4, name=None):
    return single(append_defined("log_loss", {"Predicted": input, "Labels": label}, {"epsilon": epsilon},
                                 name=name), "Loss")


def smooth_l1(x, y, inside_weight=None, outside_weight=None, sigma=None):
    helper = LayerHelper("smooth_l1_loss")
    outs = append_defined("smooth_l1_loss", {"X": x, "Y": y, "InsideWeight": inside_weight,
                                             "OutsideWeight": outside_weight},
                          {"sigma": sigma if sigma is not None else 1.0}, helper=helper)
    return outs["Out"][0]


def dice_loss(input, label, epsilon=1e-05, name=None):
    label = one_hot(label, depth=input.shape[-1])
    dims = list(range(1, len(input.shape)))
    inse = reduce_sum(input * label, dim=dims)
    denom = reduce_sum(input, dim=dims) + reduce_sum(label, dim=dims)
    return reduce_mean(1 - inse * 2 / (denom + epsilon))
