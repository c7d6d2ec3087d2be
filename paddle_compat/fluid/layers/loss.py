"""Paddle's fluid.layers.loss: cross entropy, regression, ranking, metric-learning and sampled losses, edit distance,
CTC."""

import numpy as np

from ...ir import Variable
from ..initializer import Constant, NumpyArrayInitializer
from ..layer_helper import LayerHelper
from ..param_attr import ParamAttr
from .arg_checks import check_variable_and_dtype
from .control_flow.compare import equal
from .nn.common import expand, matmul, reshape, transpose
from .nn.math import reduce_mean, reduce_sum
from .ops import square
from .tensor import cast
from .utils import append_defined, check_variable, out_var, single

__all__ = ["warpctc", "cross_entropy", "softmax_with_cross_entropy", "square_error_cost",
           "sigmoid_cross_entropy_with_logits", "huber_loss", "center_loss", "bpr_loss", "rank_loss",
           "margin_rank_loss", "teacher_student_sigmoid_loss", "kldiv_loss", "npair_loss", "mse_loss",
           "edit_distance", "nce", "hsigmoid", "sampled_softmax_with_cross_entropy"]


def warpctc(input, label, blank=0, norm_by_times=False, input_length=None, label_length=None):
    """CTC loss [N, 1] of each label sequence given unnormalised logits (LoD [T, C + 1], or padded
    [T_max, N, C + 1] with input_length/label_length)."""
    check_variable(input, "input", "warpctc")
    check_variable(label, "label", "warpctc")
    if (input_length is None) != (label_length is None):
        raise ValueError("warpctc: give both input_length and label_length, or neither")
    outs = append_defined("warpctc", {"Logits": input, "Label": label, "LogitsLength": input_length,
                                      "LabelLength": label_length},
                          attrs={"blank": int(blank), "norm_by_times": bool(norm_by_times)},
                          helper=LayerHelper("warpctc"))
    return outs["Loss"][0]


kIgnoreIndex = -100


def cross_entropy(input, label, soft_label=False, ignore_index=kIgnoreIndex):
    """-log(input[label]) per row (input holds probabilities); soft_label: -sum(label * log(input))."""
    check_variable(input, "input", "cross_entropy")
    check_variable(label, "label", "cross_entropy")
    if not soft_label:
        return _cross_entropy2(input, label, ignore_index)
    return single(append_defined("cross_entropy", {"X": input, "Label": label},
                                 {"soft_label": soft_label, "ignore_index": ignore_index}), "Y")


def _cross_entropy2(input, label, ignore_index):
    """Hard labels: Paddle 1.8 records cross_entropy2, whose MatchX (the probability picked per row) and XShape
    (the input's shape, no data) outputs its grad op reads; names and order as Paddle's."""
    helper = LayerHelper("cross_entropy2")
    out = out_var(helper, input.dtype)
    xshape = out_var(helper, input.dtype)
    match_x = out_var(helper, input.dtype)
    helper.append_op(type="cross_entropy2", inputs={"X": [input], "Label": [label]},
                     outputs={"Y": [out], "MatchX": [match_x], "XShape": [xshape]},
                     attrs={"ignore_index": ignore_index})
    return out


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
    minus_out = out_var(helper, input.dtype)
    helper.append_op(type="elementwise_sub", inputs={"X": [input], "Y": [label]}, outputs={"Out": [minus_out]},
                     attrs={"axis": -1})
    square_out = out_var(helper, input.dtype)
    helper.append_op(type="square", inputs={"X": [minus_out]}, outputs={"Out": [square_out]})
    return square_out


def sigmoid_cross_entropy_with_logits(x, label, ignore_index=kIgnoreIndex, name=None, normalize=False):
    check_variable(x, "x", "sigmoid_cross_entropy_with_logits")
    return single(append_defined("sigmoid_cross_entropy_with_logits", {"X": x, "Label": label},
                                 {"ignore_index": ignore_index, "normalize": normalize}, name=name))


def huber_loss(input, label, delta):
    helper = LayerHelper("huber_loss")
    residual = out_var(helper, input.dtype, stop_gradient=True)
    out = out_var(helper, input.dtype)
    helper.append_op(type="huber_loss", inputs={"X": [input], "Y": [label]},
                     outputs={"Out": [out], "Residual": [residual]}, attrs={"delta": float(delta)})
    return out


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
    d = helper.create_variable_for_type_inference(dtype=input.dtype)
    loss = helper.create_variable_for_type_inference(dtype=input.dtype)
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


def edit_distance(input, label, normalized=True, ignored_tokens=None, input_length=None, label_length=None):
    if ignored_tokens:
        raise NotImplementedError("edit_distance: ignored_tokens (Paddle's sequence_erase) is not supported")
    ins = {"Hyps": input, "Refs": label}
    if input_length is not None and label_length is not None:
        ins["HypsLength"], ins["RefsLength"] = input_length, label_length
    outs = append_defined("edit_distance", ins, {"normalized": normalized}, stop_gradient=True)
    return outs["Out"][0], outs["SequenceNum"][0]


_SAMPLERS = {"uniform": 0, "log_uniform": 1, "custom_dist": 2}


def _alias_table(dist):
    """Walker/Vose alias table of `dist` (probabilities of each class): (alias, alias_probs). A class whose
    scaled probability ends at exactly 1 keeps alias -1 (never redirected), as Paddle's sampler expects."""
    n = len(dist)
    alias, keep = [0] * n, [0.0] * n
    over, under = [], []
    for i, p in enumerate(dist):
        s = float(p) * n
        if s > 1.0:
            over.append([i, s])
        elif s < 1.0:
            under.append([i, s])
        else:
            keep[i], alias[i] = s, -1
    while over and under:
        big, small = over.pop(0), under.pop(0)
        keep[small[0]], alias[small[0]] = small[1], big[0]
        rest = big[1] + small[1] - 1.0
        if rest > 1.0:
            over.append([big[0], rest])
        elif rest < 1.0:
            under.append([big[0], rest])
        else:
            keep[big[0]], alias[big[0]] = rest, -1
    for left in over[:1] + under[:1]:    # rounding leftovers: always keep the class itself
        keep[left[0]], alias[left[0]] = 1.0, -1
    return alias, keep


def nce(input, label, num_total_classes, sample_weight=None, param_attr=None, bias_attr=None, num_neg_samples=None,
        name=None, sampler="uniform", custom_dist=None, seed=0, is_sparse=False):
    """Noise-contrastive estimation cost [N, 1] (divided by num_neg_samples + 1, as Paddle's layer does).
    Creates Weight [num_total_classes, D] and Bias [num_total_classes, 1]."""
    check_variable_and_dtype(input, "input", ("float32", "float64"), "nce")
    check_variable_and_dtype(label, "label", ("int64",), "nce")
    if sampler not in _SAMPLERS:
        raise ValueError("nce: sampler must be one of %s, got %r" % (sorted(_SAMPLERS), sampler))
    helper = LayerHelper("nce", **locals())
    dim = input.shape[1]
    w = helper.create_parameter(attr=helper.param_attr, shape=[num_total_classes, dim], dtype=input.dtype)
    inputs = {"Input": [input], "Label": [label], "Weight": [w]}
    if helper.bias_attr:
        inputs["Bias"] = [helper.create_parameter(attr=helper.bias_attr, shape=[num_total_classes, 1],
                                                  dtype=input.dtype, is_bias=True)]
    if sample_weight is not None:
        inputs["SampleWeight"] = [sample_weight]
    if sampler == "custom_dist":
        if custom_dist is None or len(custom_dist) != num_total_classes:
            raise ValueError("nce: sampler='custom_dist' needs custom_dist with num_total_classes=%d "
                             "probabilities" % num_total_classes)
        alias, keep = _alias_table(custom_dist)
        for slot, arr in (("CustomDistProbs", np.array(custom_dist, "float32")),
                          ("CustomDistAlias", np.array(alias, "int32")),
                          ("CustomDistAliasProbs", np.array(keep, "float32"))):
            p = helper.create_parameter(attr=ParamAttr(), shape=arr.shape, dtype=arr.dtype,
                                        default_initializer=NumpyArrayInitializer(arr))
            p.stop_gradient = True
            inputs[slot] = [p]
    num_neg_samples = 10 if num_neg_samples is None else int(num_neg_samples)
    cost, logits = out_var(helper, input.dtype), out_var(helper, input.dtype)
    labels = out_var(helper, label.dtype)
    helper.append_op(type="nce", inputs=inputs,
                     outputs={"Cost": [cost], "SampleLogits": [logits], "SampleLabels": [labels]},
                     attrs={"num_total_classes": int(num_total_classes), "num_neg_samples": num_neg_samples,
                            "seed": int(seed), "sampler": _SAMPLERS[sampler], "is_sparse": bool(is_sparse),
                            "remote_prefetch": bool(is_sparse)})
    return cost / (num_neg_samples + 1)


def hsigmoid(input, label, num_classes, param_attr=None, bias_attr=None, name=None, path_table=None,
             path_code=None, is_custom=False, is_sparse=False):
    """Hierarchical sigmoid cost [N, 1] over the default complete binary tree of num_classes leaves (W is
    [num_classes - 1, D]) or, with is_custom, the tree given per row by path_table/path_code (W is
    [num_classes, D])."""
    check_variable(input, "input", "hsigmoid")
    check_variable(label, "label", "hsigmoid")
    if not is_custom:
        if num_classes is None or num_classes < 2:
            raise ValueError("hsigmoid: num_classes must be at least 2 with the default tree, got %s"
                             % num_classes)
        if path_table is not None or path_code is not None:
            raise ValueError("hsigmoid: path_table/path_code are only read with is_custom=True")
        is_sparse = False      # as Paddle: sparse rows only with a custom tree
    else:
        for arg, v in (("path_table", path_table), ("path_code", path_code), ("num_classes", num_classes)):
            if v is None:
                raise ValueError("hsigmoid: %s must be given with is_custom=True" % arg)
    helper = LayerHelper("hierarchical_sigmoid", **locals())
    dim = input.shape[1]
    rows = num_classes if is_custom else num_classes - 1
    w = helper.create_parameter(attr=helper.param_attr, shape=[rows, dim], dtype=input.dtype)
    inputs = {"X": [input], "W": [w], "Label": [label]}
    if is_custom:
        inputs["PathTable"], inputs["PathCode"] = [path_table], [path_code]
    if helper.bias_attr:
        inputs["Bias"] = [helper.create_parameter(attr=helper.bias_attr, shape=[rows, 1], dtype=input.dtype,
                                                  is_bias=True)]
    out, pre_out = out_var(helper, input.dtype), out_var(helper, input.dtype)
    helper.append_op(type="hierarchical_sigmoid", inputs=inputs,
                     outputs={"Out": [out], "PreOut": [pre_out], "W_Out": [w]},
                     attrs={"num_classes": num_classes, "is_sparse": bool(is_sparse),
                            "remote_prefetch": bool(is_sparse)})
    return out


def sampled_softmax_with_cross_entropy(logits, label, num_samples, num_true=1, remove_accidental_hits=True,
                                       use_customized_samples=False, customized_samples=None,
                                       customized_probabilities=None, seed=0):
    """Softmax cross entropy [N, 1] over the true class and num_samples sampled classes (log-uniform, unique,
    shared by the batch; or customized_samples [N, num_true + num_samples] with their probabilities)."""
    check_variable(logits, "logits", "sampled_softmax_with_cross_entropy")
    check_variable(label, "label", "sampled_softmax_with_cross_entropy")
    if num_true != 1:
        # Paddle 1.8.5's layer builds one_hot(depth=num_samples + 1) of [N, num_true] labels, which its
        # softmax_with_cross_entropy then rejects: only num_true=1 runs there
        raise ValueError("sampled_softmax_with_cross_entropy: num_true=%d; Paddle 1.8's layer supports "
                         "num_true=1 only" % num_true)
    if use_customized_samples and (customized_samples is None or customized_probabilities is None):
        raise ValueError("sampled_softmax_with_cross_entropy: use_customized_samples=True needs "
                         "customized_samples and customized_probabilities")
    helper = LayerHelper("sample_logits", **locals())
    samples = customized_samples if use_customized_samples else out_var(helper, "int64", stop_gradient=True)
    probs = customized_probabilities if use_customized_samples else out_var(helper, logits.dtype,
                                                                             stop_gradient=True)
    sampled_logits = out_var(helper, logits.dtype)
    sampled_label = out_var(helper, "int64", stop_gradient=True)
    soft = out_var(helper, logits.dtype, stop_gradient=True)
    logits_dim = out_var(helper, logits.dtype, stop_gradient=True)
    labels_dim = out_var(helper, "int64", stop_gradient=True)
    ins = {"Logits": [logits], "Labels": [label]}
    if use_customized_samples:
        ins["CustomizedSamples"], ins["CustomizedProbabilities"] = [customized_samples], [customized_probabilities]
    helper.append_op(type="sample_logits", inputs=ins,
                     outputs={"Samples": [samples], "Probabilities": [probs], "SampledLabels": [sampled_label],
                              "SampledLogits": [sampled_logits], "LogitsDim": [logits_dim],
                              "LabelsDim": [labels_dim]},
                     attrs={"use_customized_samples": bool(use_customized_samples), "uniq": True,
                            "remove_accidental_hits": bool(remove_accidental_hits),
                            "num_samples": int(num_samples), "seed": int(seed)})
    helper.append_op(type="one_hot", inputs={"X": [sampled_label]}, outputs={"Out": [soft]},
                     attrs={"depth": num_samples + 1})
    loss, softmax = out_var(helper, logits.dtype), out_var(helper, logits.dtype)
    helper.append_op(type="softmax_with_cross_entropy", inputs={"Logits": [sampled_logits], "Label": [soft]},
                     outputs={"Softmax": [softmax], "Loss": [loss]},
                     attrs={"soft_label": True, "ignore_index": False, "numeric_stable_mode": False})
    return loss / num_true
