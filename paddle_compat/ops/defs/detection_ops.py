"""Detection ops of Paddle 1.8's fluid.layers.detection: sigmoid_focal_loss (a kernel), and the program-building
facts (slots, output shapes) of retinanet_target_assign, retinanet_detection_output and
roi_perspective_transform, whose kernels are not written: lowering a program that runs them raises, naming the op.
Compile-time shapes follow Paddle 1.8.5's (checked by building the layers there)."""

from ..lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first

_FLT_MIN = 1.175494e-38     # Paddle clamps p at FLT_MIN before its log


def _focal_shape(ins, attrs):
    x = first(ins, "X")
    return {"Out": OutMeta(x.shape, x.dtype, x.lod_level)}


# X [N, C] logits of C foreground classes; Label [N, 1] in 0 (background) .. C, -1 ignored; FgNum [1] the
# foreground count (at least 1). Per element (class d of row n, label g):
#   g == d + 1:        -alpha / fg * (1 - p)^gamma * log(max(p, FLT_MIN))
#   g != -1, d + 1:    -(1 - alpha) / fg * p^gamma * log(1 - p)   (log(1 - p) in its overflow-safe form)
# with p = sigmoid(x). The gradient is autograd's of the same expression.
@defop("sigmoid_focal_loss", inputs=("X", "Label", "FgNum"), infer_shape=_focal_shape, no_grad=("Label", "FgNum"))
def sigmoid_focal_loss(op, ctx):
    gamma, alpha = float(attr(op, "gamma", 2.0)), float(attr(op, "alpha", 0.25))

    def k(x, label, fg_num):
        n, c = x.shape
        g = label.reshape(-1, 1).long()
        if g.shape[0] != n:
            raise ValueError("sigmoid_focal_loss: Label=%s has %d rows but X=%s has %d"
                             % (op.input("Label")[0], g.shape[0], op.input("X")[0], n))
        fg = fg_num.reshape(-1)[0].to(x.dtype).clamp(min=1)
        d = torch.arange(1, c + 1, device=x.device).unsqueeze(0)
        pos = (g == d).to(x.dtype)
        neg = ((g != -1) & (g != d)).to(x.dtype)
        p = torch.sigmoid(x)
        term_pos = (1 - p) ** gamma * torch.log(p.clamp(min=_FLT_MIN))
        relu_x = x * (x >= 0).to(x.dtype)
        term_neg = p ** gamma * (-relu_x - torch.log1p(torch.exp(x - 2 * relu_x)))
        return -pos * term_pos * (alpha / fg) - neg * term_neg * ((1 - alpha) / fg)
    return k


def _no_kernel(op_type, what):
    def factory(op, ctx):
        raise NotImplementedError("%s: building the program is supported, running it is not (%s)"
                                  % (op_type, what))
    return factory


def _retinanet_assign_shape(ins, attrs):
    a, gt = first(ins, "Anchor"), first(ins, "GtBoxes")
    m = gt.shape[0]                 # Paddle 1.8.5's compile-time sizes: GtBoxes' rows
    return {"LocationIndex": OutMeta((m,), "int32"), "ScoreIndex": OutMeta((m,), "int32"),
            "TargetLabel": OutMeta((m, 1), "int32"), "TargetBBox": OutMeta((m, 4), a.dtype),
            "BBoxInsideWeight": OutMeta((m, 4), a.dtype), "ForegroundNumber": OutMeta((m, 1), "int32")}


defop("retinanet_target_assign", inputs=("Anchor", "GtBoxes", "GtLabels", "IsCrowd", "ImInfo"),
      outputs=("LocationIndex", "ScoreIndex", "TargetLabel", "TargetBBox", "BBoxInsideWeight", "ForegroundNumber"),
      infer_shape=_retinanet_assign_shape, differentiable=False)(
    _no_kernel("retinanet_target_assign", "anchor-to-ground-truth IoU matching is not implemented"))


def _retinanet_output_shape(ins, attrs):
    b = ins["BBoxes"][0]
    return {"Out": OutMeta((b.shape[1], 6), b.dtype)}     # [kept boxes, (label, score, x1, y1, x2, y2)]


defop("retinanet_detection_output", inputs=("BBoxes*", "Scores*", "Anchors*", "ImInfo"),
      infer_shape=_retinanet_output_shape, differentiable=False)(
    _no_kernel("retinanet_detection_output", "box decoding with multi-class NMS is not implemented"))


def _rpt_shape(ins, attrs):
    x, rois = first(ins, "X"), first(ins, "ROIs")
    th, tw = int(attrs["transformed_height"]), int(attrs["transformed_width"])
    n = rois.shape[0]
    return {"Out": OutMeta((n, x.shape[1], th, tw), x.dtype, rois.lod_level),
            "Mask": OutMeta((n, 1, th, tw), "int32"), "TransformMatrix": OutMeta((n, 9), x.dtype),
            "Out2InIdx": OutMeta((n, x.shape[1], th, tw), "int32"),
            "Out2InWeights": OutMeta((n, x.shape[1], th, tw), x.dtype)}


defop("roi_perspective_transform", inputs=("X", "ROIs"),
      outputs=("Out", "Mask", "TransformMatrix", "Out2InIdx", "Out2InWeights"), lod_in=("ROIs",),
      infer_shape=_rpt_shape, no_grad=("ROIs",))(
    _no_kernel("roi_perspective_transform", "the perspective warp of quadrilateral RoIs is not implemented"))
