"""A few of Paddle 1.8's detection layers (ops in paddle_compat/ops/defs/detection_ops.py and retinanet_ops.py):
sigmoid_focal_loss, roi_perspective_transform, retinanet_target_assign and retinanet_detection_output. The rest
of fluid.layers.detection is not offered."""

from ...ir import dtype_name
from ..layer_helper import LayerHelper
from .utils import append_defined, check_variable
from .nn.common import gather, reshape

__all__ = ["sigmoid_focal_loss", "retinanet_target_assign", "retinanet_detection_output", "roi_perspective_transform"]


def _dtype_in(var, what, layer, dtypes):
    check_variable(var, what, layer)
    name = dtype_name(var.dtype)
    if name not in dtypes:
        raise TypeError("%s: %s (%s) must be %s, got %s" % (layer, what, var.name, " or ".join(dtypes), name))


def sigmoid_focal_loss(x, label, fg_num, gamma=2.0, alpha=0.25):
    """Focal loss [N, C] of logits x [N, C] against int32 labels [N, 1] (0 background, 1..C classes, -1
    ignored), normalised by the int32 foreground count fg_num [1]."""
    _dtype_in(x, "x", "sigmoid_focal_loss", ("float32", "float64"))
    _dtype_in(label, "label", "sigmoid_focal_loss", ("int32",))
    _dtype_in(fg_num, "fg_num", "sigmoid_focal_loss", ("int32",))
    outs = append_defined("sigmoid_focal_loss", {"X": x, "Label": label, "FgNum": fg_num},
                          {"gamma": float(gamma), "alpha": float(alpha)}, helper=LayerHelper("sigmoid_focal_loss"))
    return outs["Out"][0]


def retinanet_target_assign(bbox_pred, cls_logits, anchor_box, anchor_var, gt_boxes, gt_labels, is_crowd, im_info,
                            num_classes=1, positive_overlap=0.5, negative_overlap=0.4):
    """RetinaNet's anchor targets: (predicted class logits, predicted boxes, target labels, target boxes, box
    inside weights, foreground count). gt_boxes, gt_labels and is_crowd carry one LoD sequence per image."""
    for v, what in ((bbox_pred, "bbox_pred"), (cls_logits, "cls_logits"), (anchor_box, "anchor_box"),
                    (anchor_var, "anchor_var"), (gt_boxes, "gt_boxes"), (im_info, "im_info")):
        _dtype_in(v, what, "retinanet_target_assign", ("float32", "float64"))
    _dtype_in(gt_labels, "gt_labels", "retinanet_target_assign", ("int32",))
    _dtype_in(is_crowd, "is_crowd", "retinanet_target_assign", ("int32",))
    outs = append_defined("retinanet_target_assign",
                          {"Anchor": anchor_box, "GtBoxes": gt_boxes, "GtLabels": gt_labels, "IsCrowd": is_crowd,
                           "ImInfo": im_info},
                          {"positive_overlap": positive_overlap, "negative_overlap": negative_overlap},
                          helper=LayerHelper("retinanet_target_assign"), stop_gradient=True)
    get = lambda slot: outs[slot][0]  # noqa: E731
    logits = reshape(cls_logits, shape=(-1, num_classes))
    boxes = reshape(bbox_pred, shape=(-1, 4))
    logits, boxes = gather(logits, get("ScoreIndex")), gather(boxes, get("LocationIndex"))
    return logits, boxes, get("TargetLabel"), get("TargetBBox"), get("BBoxInsideWeight"), get("ForegroundNumber")


def retinanet_detection_output(bboxes, scores, anchors, im_info, score_threshold=0.05, nms_top_k=1000,
                               keep_top_k=100, nms_threshold=0.3, nms_eta=1.0):
    """RetinaNet's detections [kept, 6] (label, score, box; LoD per image) from per-level box deltas, scores and
    anchors: per-level top-k, decoding, per-class NMS, keep_top_k."""
    for what, vs in (("bboxes", bboxes), ("scores", scores), ("anchors", anchors)):
        if not isinstance(vs, (list, tuple)) or not vs:
            raise TypeError("retinanet_detection_output: %s must be a non-empty list of Variables" % what)
        for i, v in enumerate(vs):
            _dtype_in(v, "%s[%d]" % (what, i), "retinanet_detection_output", ("float32", "float64"))
    if not len(bboxes) == len(scores) == len(anchors):
        raise ValueError("retinanet_detection_output: bboxes, scores and anchors need one entry per level, got "
                         "%d, %d and %d" % (len(bboxes), len(scores), len(anchors)))
    _dtype_in(im_info, "im_info", "retinanet_detection_output", ("float32", "float64"))
    outs = append_defined("retinanet_detection_output",
                          {"BBoxes": list(bboxes), "Scores": list(scores), "Anchors": list(anchors),
                           "ImInfo": im_info},
                          {"score_threshold": score_threshold, "nms_top_k": nms_top_k,
                           "nms_threshold": nms_threshold, "nms_eta": nms_eta, "keep_top_k": keep_top_k},
                          helper=LayerHelper("retinanet_detection_output"), stop_gradient=True)
    return outs["Out"][0]


def roi_perspective_transform(input, rois, transformed_height, transformed_width, spatial_scale=1.0, name=None):
    """Perspective warp of quadrilateral RoIs [R, 8] (x, y of 4 corners; LoD over images) to [R, C, h, w];
    returns (out, mask, transform matrix)."""
    _dtype_in(input, "input", "roi_perspective_transform", ("float32",))
    _dtype_in(rois, "rois", "roi_perspective_transform", ("float32",))
    for what, v in (("transformed_height", transformed_height), ("transformed_width", transformed_width)):
        if not isinstance(v, int) or v <= 0:
            raise ValueError("roi_perspective_transform: %s must be a positive int, got %r" % (what, v))
    outs = append_defined("roi_perspective_transform", {"X": input, "ROIs": rois},
                          {"transformed_height": transformed_height, "transformed_width": transformed_width,
                           "spatial_scale": float(spatial_scale)}, helper=LayerHelper("roi_perspective_transform",
                                                                                      name=name))
    return outs["Out"][0], outs["Mask"][0], outs["TransformMatrix"][0]


_NOT_OFFERED = frozenset([
    "anchor_generator", "bipartite_match", "box_clip", "box_coder", "box_decoder_and_assign",
    "collect_fpn_proposals", "density_prior_box", "detection_output", "distribute_fpn_proposals",
    "generate_mask_labels", "generate_proposal_labels", "generate_proposals", "iou_similarity", "locality_aware_nms",
    "matrix_nms", "multi_box_head", "multiclass_nms", "polygon_box_transform", "prior_box", "rpn_target_assign",
    "ssd_loss", "target_assign", "yolo_box", "yolov3_loss"])


def __getattr__(name):
    if name in _NOT_OFFERED:
        raise AttributeError("fluid.layers.detection.%s is not offered: of Paddle 1.8's detection layers only %s are"
                             % (name, ", ".join(__all__)))
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def detection_map(detect_res, label, class_num, background_label=0, overlap_threshold=0.3, evaluate_difficult=True,
                  has_state=None, input_states=None, out_states=None, ap_version="integral"):
    """The detection_map op (ops/defs/detection_map.py): the mAP of detect_res [M, 6] against label [N, 6] or
    [N, 5] (LoD: rows per image); input_states / out_states (positive counts, true and false positives) and
    has_state accumulate over batches. Not in fluid.layers' names, as in Paddle 1.8. As 1.8.5's builder, it
    does not pass background_label on: the op's default (0) is used."""
    helper = LayerHelper("detection_map")
    if input_states is not None and (out_states is None or [v.name for v in input_states] !=
                                     [v.name for v in out_states]):
        # the op reads its states through its outputs (ops/defs/detection_map.py): the accumulating form
        raise ValueError("detection_map: input_states must be out_states (the states it accumulates into)")

    def state(i, dtype):
        return out_states[i] if out_states is not None else helper.create_variable_for_type_inference(dtype=dtype)

    map_out = helper.create_variable_for_type_inference(dtype="float32")
    outs = {"MAP": map_out, "AccumPosCount": state(0, "int32"), "AccumTruePos": state(1, "float32"),
            "AccumFalsePos": state(2, "float32")}
    ins = {"Label": label, "DetectRes": detect_res, "HasState": has_state}
    if input_states is not None:
        ins.update({"PosCount": input_states[0], "TruePos": input_states[1], "FalsePos": input_states[2]})
    helper.append_op(type="detection_map", inputs={k: [v] for k, v in ins.items() if v is not None},
                     outputs={k: [v] for k, v in outs.items()},
                     attrs={"overlap_threshold": overlap_threshold, "evaluate_difficult": evaluate_difficult,
                            "ap_type": ap_version, "class_num": class_num})
    return map_out
