"""Loss layers of Paddle 1.8 (and continuous_value_model, fsp_matrix, add_position_encoding,
bilinear_tensor_product), ops defined in paddle_compat/ops/defs/loss_more.py. Paddle 1.8's signatures."""

from ...ir import Variable
from ..initializer import Constant
from ..layer_helper import LayerHelper
from .helpers import append_defined, single
from .loss import softmax_with_cross_entropy, square_error_cost
from .nn import expand, matmul, one_hot, reshape, transpose
from .ops import equal, reduce_mean, reduce_sum, square
from .tensor import cast

__all__ = ["smooth_l1", "dice_loss", "center_loss", "bpr_loss", "rank_loss", "margin_rank_loss",
           "teacher_student_sigmoid_loss", "kldiv_loss", "npair_loss", "mse_loss", "continuous_value_model",
           "fsp_matrix", "add_position_encoding", "bilinear_tensor_product"]


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


def center_loss(input, label, num_classes, alpha, param_attr, update_center=True):
    helper = LayerHelper("center_loss", param_attr=param_attr)
    centers = helper.create_parameter(attr=helper.param_attr, shape=[num_classes, input.shape[1]],
                                      dtype=input.dtype)
    centers.stop_gradient = True
    if isinstance(alpha, Variable):
        rate = alpha
    else:
        if not isinstance(alpha, float):
            raise TypeError("center_loss: alpha must be a float or a Variable, got %r" % (alpha,))
        rate = helper.create_global_variable(name="centerloss_alpha", shape=[1], dtype="float32",
                                             persistable=True, stop_gradient=True)
        helper.set_variable_initializer(rate, Constant(alpha))
    d = helper.create_variable_for_type_inference(dtype=input.dtype, shape=tuple(input.shape))
    loss = helper.create_variable_for_type_inference(dtype=input.dtype, shape=(input.shape[0], 1))
    helper.append_op(type="center_loss", inputs={"X": [input], "Label": [label], "Centers": [centers],
                                                 "CenterUpdateRate": [rate]},
                     outputs={"SampleCenterDiff": [d], "Loss": [loss], "CentersOut": [centers]},
                     attrs={"cluster_num": num_classes, "need_update": update_center})
    return loss


def bpr_loss(input, label, name=None):
    return append_defined("bpr_loss", {"X": input, "Label": label}, name=name)["Y"][0]


def rank_loss(label, left, right, name=None):
    return single(append_defined("rank_loss", {"Label": label, "Left": left, "Right": right}, name=name))


def margin_rank_loss(label, left, right, margin=0.1, name=None):
    return single(append_defined("margin_rank_loss", {"Label": label, "Left": left, "Right": right},
                                 {"margin": margin}, name=name))


def teacher_student_sigmoid_loss(input, label, soft_max_up_bound=15.0, soft_max_lower_bound=-15.0):
    return append_defined("teacher_student_sigmoid_loss", {"X": input, "Label": label},
                          {"soft_max_lower_bound": float(soft_max_lower_bound),
                           "soft_max_up_bound": float(soft_max_up_bound)})["Y"][0]


def kldiv_loss(x, target, reduction="mean", name=None):
    if reduction not in ("none", "batchmean", "mean", "sum"):
        raise ValueError("kldiv_loss: reduction must be none, batchmean, mean or sum, got %r" % (reduction,))
    return append_defined("kldiv_loss", {"X": x, "Target": target}, {"reduction": reduction}, name=name)["Loss"][0]


def npair_loss(anchor, positive, labels, l2_reg=0.002):
    beta = 0.25
    n = labels.shape[0]
    # in place, as Paddle 1.8: the caller's labels variable takes the shape [n, 1]
    labels = reshape(labels, shape=[n, 1], inplace=True)
    labels = expand(labels, expand_times=[1, n])
    labels = cast(equal(labels, transpose(labels, perm=[1, 0])), "float32")
    labels = labels / reduce_sum(labels, dim=1, keep_dim=True)
    l2loss = reduce_mean(reduce_sum(square(anchor), 1)) + reduce_mean(reduce_sum(square(positive), 1))
    l2loss = l2loss * beta * l2_reg
    sim = matmul(anchor, positive, transpose_x=False, transpose_y=True)
    ce = softmax_with_cross_entropy(logits=sim, label=labels, soft_label=True)
    return l2loss + reduce_mean(reduce_sum(labels * ce, 0))


def mse_loss(input, label):
    return reduce_mean(square_error_cost(input, label))


def continuous_value_model(input, cvm, use_cvm=True):
    return append_defined("cvm", {"X": input, "CVM": cvm}, {"use_cvm": use_cvm})["Y"][0]


def fsp_matrix(x, y):
    return single(append_defined("fsp", {"X": x, "Y": y}))


def add_position_encoding(input, alpha, beta, name=None):
    return single(append_defined("add_position_encoding", {"X": input}, {"alpha": alpha, "beta": beta},
                                 name=name))


def bilinear_tensor_product(x, y, size, act=None, name=None, param_attr=None, bias_attr=None):
    helper = LayerHelper("bilinear_tensor_product", name=name, act=act, param_attr=param_attr,
                         bias_attr=bias_attr)
    w = helper.create_parameter(attr=helper.param_attr, shape=[size, x.shape[1], y.shape[1]], dtype=x.dtype)
    inputs = {"X": x, "Y": y, "Weight": w}
    if helper.bias_attr:
        inputs["Bias"] = helper.create_parameter(attr=helper.bias_attr, shape=[1, size], dtype=x.dtype,
                                                 is_bias=True)
    out = single(append_defined("bilinear_tensor_product", inputs, helper=helper))
    return helper.append_activation(out)
