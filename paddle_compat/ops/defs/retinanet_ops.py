"""RetinaNet ops of Paddle 1.8's fluid.layers.detection: retinanet_target_assign (anchor targets) and
retinanet_detection_output (decoding and multi-class NMS). Both work per image, as Paddle's CPU kernels; compile-time
shapes follow Paddle 1.8.5's."""

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
from ..shapes import first
from .detection_ops import _c_round


def _retinanet_assign_shape(ins, attrs):
    a, gt = first(ins, "Anchor"), first(ins, "GtBoxes")
    m = gt.shape[0]                 # Paddle 1.8.5's compile-time sizes: GtBoxes' rows
    return {"LocationIndex": OutMeta((m,), "int32"), "ScoreIndex": OutMeta((m,), "int32"),
            "TargetLabel": OutMeta((m, 1), "int32"), "TargetBBox": OutMeta((m, 4), a.dtype),
            "BBoxInsideWeight": OutMeta((m, 4), a.dtype), "ForegroundNumber": OutMeta((m, 1), "int32")}


def _iou_plus1(a, b):
    """IoU [A, G] of pixel boxes (x1, y1, x2, y2 inclusive: widths are x2 - x1 + 1), 0 without overlap."""
    area = lambda t: (t[:, 2] - t[:, 0] + 1) * (t[:, 3] - t[:, 1] + 1)  # noqa: E731
    lo = torch.maximum(a[:, None, :2], b[None, :, :2])
    hi = torch.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = (hi - lo + 1).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    iou = inter / (area(a)[:, None] + area(b)[None, :] - inter)
    return torch.where(inter == 0, torch.zeros_like(iou), iou)


def _box_to_delta(ex, gt):
    """Paddle's BoxToDelta (pixel boxes, no weights): (dx, dy, log dw, log dh) of gt relative to ex."""
    ew, eh = ex[:, 2] - ex[:, 0] + 1, ex[:, 3] - ex[:, 1] + 1
    gw, gh = gt[:, 2] - gt[:, 0] + 1, gt[:, 3] - gt[:, 1] + 1
    ecx, ecy = ex[:, 0] + 0.5 * ew, ex[:, 1] + 0.5 * eh
    gcx, gcy = gt[:, 0] + 0.5 * gw, gt[:, 1] + 0.5 * gh
    return torch.stack([(gcx - ecx) / ew, (gcy - ecy) / eh, torch.log(gw / ew), torch.log(gh / eh)], 1)


# Per image (GtBoxes' LoD): crowd boxes dropped, the rest scaled by ImInfo's scale; an anchor is foreground when
# its best IoU reaches positive_overlap or it ties (within 1e-5) some box's best IoU, then background (label 0)
# when its best IoU is below negative_overlap (which wins, as in Paddle). Outputs, images one after another:
# LocationIndex the foreground anchors (+ image * A) after one repeat of the first candidate per demoted one,
# ScoreIndex the foreground then the background anchors, TargetLabel their labels (the best box's, 0 for
# background), TargetBBox the location entries' deltas, BBoxInsideWeight 0 for the repeats and 1 for the rest,
# ForegroundNumber the image's foreground candidates plus 1 (Paddle's count).
@defop("retinanet_target_assign", inputs=("Anchor", "GtBoxes", "GtLabels", "IsCrowd", "ImInfo"),
       outputs=("LocationIndex", "ScoreIndex", "TargetLabel", "TargetBBox", "BBoxInsideWeight", "ForegroundNumber"),
       lod_in=("GtBoxes", "GtLabels", "IsCrowd"),
       lod_out=("LocationIndex", "ScoreIndex", "TargetLabel", "TargetBBox", "BBoxInsideWeight", "ForegroundNumber"),
       infer_shape=_retinanet_assign_shape, differentiable=False, host="data")
def retinanet_target_assign(op, ctx):
    pos, neg = float(attr(op, "positive_overlap", 0.5)), float(attr(op, "negative_overlap", 0.4))

    def k(anchor, gt_boxes, gt_labels, is_crowd, im_info, gt_lod, lbl_lod, crowd_lod):
        for slot, lod in (("GtBoxes", gt_lod), ("GtLabels", lbl_lod), ("IsCrowd", crowd_lod)):
            if not lod:
                raise ValueError("retinanet_target_assign: %s=%s carries no LoD (boxes per image)"
                                 % (slot, op.input(slot)[0]))
        with torch.no_grad():
            off, loff, coff = (lod[-1].tolist() for lod in (gt_lod, lbl_lod, crowd_lod))
            a = anchor.reshape(-1, 4)
            na = a.shape[0]
            locs, scores, labels, deltas, weights, fg_nums = [], [], [], [], [], []
            for i in range(len(off) - 1):
                keep = is_crowd.reshape(-1)[coff[i]:coff[i + 1]] == 0
                gt = gt_boxes[off[i]:off[i + 1]][keep] * im_info[i, 2]
                lbl = gt_labels.reshape(-1)[loff[i]:loff[i + 1]][keep]
                if gt.shape[0]:
                    iou = _iou_plus1(a, gt)
                    best, arg = iou.max(1)
                    ties = ((iou - iou.max(0).values[None, :]).abs() < 1e-5).any(1)
                else:
                    best = torch.full((na,), float("-inf"), dtype=a.dtype, device=a.device)
                    arg = torch.zeros(na, dtype=torch.int64, device=a.device)
                    ties = torch.zeros(na, dtype=torch.bool, device=a.device)
                fg_fake = ties | (best >= pos)
                label = torch.full((na,), -1, dtype=torch.int64, device=a.device)
                label[fg_fake] = 1
                demoted = fg_fake & (best < neg)
                label[best < neg] = 0
                fg = torch.nonzero(label == 1).reshape(-1)
                bg = torch.nonzero(label == 0).reshape(-1)
                # Paddle keeps one "fake" location entry per demoted anchor, in front: the first foreground
                # candidate repeated, with BBoxInsideWeight 0 (so its box loss is 0).
                n_fake = int(demoted.sum())
                first = torch.nonzero(fg_fake).reshape(-1)[:1].repeat(n_fake)
                loc_i = torch.cat([first, fg])
                locs.append(loc_i + i * na)
                scores.append(torch.cat([fg, bg]) + i * na)
                labels.append(torch.cat([lbl[arg[fg]].long(), torch.zeros_like(bg)]))
                deltas.append(_box_to_delta(a[loc_i], gt[arg[loc_i]]) if loc_i.numel() else a.new_zeros(0, 4))
                weights.append(torch.cat([a.new_zeros(n_fake, 4), a.new_ones(fg.numel(), 4)]))
                fg_nums.append(int(fg_fake.sum()) + 1)
            loc = torch.cat(locs).to(torch.int32)
            score = torch.cat(scores).to(torch.int32)
            sizes = lambda ts: torch.tensor([0] + [t.numel() for t in ts], device=a.device).cumsum(0)  # noqa: E731
            loc_lod, score_lod = sizes(locs), sizes(scores)
            fg_lod = torch.arange(len(fg_nums) + 1, device=a.device)
            delta = torch.cat(deltas).to(anchor.dtype)
            return (loc, score, torch.cat(labels).to(torch.int32).reshape(-1, 1), delta,
                    torch.cat(weights).to(anchor.dtype),
                    torch.tensor(fg_nums, dtype=torch.int32, device=a.device).reshape(-1, 1),
                    (loc_lod,), (score_lod,), (score_lod,), (loc_lod,), (loc_lod,), (fg_lod,))
    return k


def _retinanet_output_shape(ins, attrs):
    # [kept boxes, (label, score, x1, y1, x2, y2)]. Declared with lod_level 1 (Paddle declares 0 but sets the
    # per-image LoD at run time; here a fetched result carries a LoD only when its variable declares one).
    b = ins["BBoxes"][0]
    return {"Out": OutMeta((b.shape[1], 6), b.dtype, 1)}


def _jaccard_plus1(b):
    """Paddle's JaccardOverlap (pixel boxes, not normalised) between all rows of b [K, 4]: [K, K]."""
    valid = (b[:, 2] >= b[:, 0]) & (b[:, 3] >= b[:, 1])
    area = torch.where(valid, (b[:, 2] - b[:, 0] + 1) * (b[:, 3] - b[:, 1] + 1), torch.zeros_like(b[:, 0]))
    lo = torch.maximum(b[:, None, :2], b[None, :, :2])
    hi = torch.minimum(b[:, None, 2:], b[None, :, 2:])
    wh = hi - lo + 1
    inter = wh[..., 0] * wh[..., 1]
    iou = inter / (area[:, None] + area[None, :] - inter)
    apart = (b[None, :, 0] > b[:, None, 2]) | (b[None, :, 2] < b[:, None, 0]) | \
        (b[None, :, 1] > b[:, None, 3]) | (b[None, :, 3] < b[:, None, 1])
    return torch.where(apart, torch.zeros_like(iou), iou)


def _greedy_nms(iou, threshold, eta):
    """Indices kept by Paddle's NMSFast over candidates already in score order (adaptive threshold: times eta
    after each kept box while above 0.5)."""
    kept, thr = [], threshold
    for j in range(iou.shape[0]):
        if not kept or bool((iou[j, kept] <= thr).all()):
            kept.append(j)
            if eta < 1 and thr > 0.5:
                thr *= eta
    return kept


# Per image: each FPN level's scores [M_l, C] above score_threshold (0 for the last level), the nms_top_k best
# (stable order), decoded against the level's anchors (pixel boxes, clipped to the image scaled back by
# im_scale); then per class greedy NMS over all levels, and the keep_top_k best overall. Out rows are
# (label, score, x1, y1, x2, y2) with labels 1-based, images one after another (LoD); no detection at all gives
# [0, 6]. Per-image and NMS loops are sequential, as in Paddle.
@defop("retinanet_detection_output", inputs=("BBoxes*", "Scores*", "Anchors*", "ImInfo"), lod_out=("Out",),
       infer_shape=_retinanet_output_shape, differentiable=False, host="data")
def retinanet_detection_output(op, ctx):
    score_thr = float(attr(op, "score_threshold", 0.05))
    top_k, keep_k = int(attr(op, "nms_top_k", 1000)), int(attr(op, "keep_top_k", 100))
    nms_thr, eta = float(attr(op, "nms_threshold", 0.3)), float(attr(op, "nms_eta", 1.0))

    def decode(deltas, anchors, im_h, im_w, scale):
        w = anchors[:, 2] - anchors[:, 0] + 1
        h = anchors[:, 3] - anchors[:, 1] + 1
        cx, cy = anchors[:, 0] + w / 2, anchors[:, 1] + h / 2
        tx, ty = deltas[:, 0] * w + cx, deltas[:, 1] * h + cy
        tw, th = torch.exp(deltas[:, 2]) * w, torch.exp(deltas[:, 3]) * h
        box = torch.stack([tx - tw / 2, ty - th / 2, tx + tw / 2 - 1, ty + th / 2 - 1], 1) / scale
        hi = torch.stack([im_w - 1, im_h - 1, im_w - 1, im_h - 1]).to(box.dtype)
        return torch.maximum(torch.minimum(box, hi), torch.zeros_like(box))

    def k(bboxes, scores, anchors, im_info):
        if not len(bboxes) == len(scores) == len(anchors):
            raise ValueError("retinanet_detection_output: BBoxes, Scores and Anchors need one tensor per level")
        rows, counts = [], []
        with torch.no_grad():
            for i in range(scores[0].shape[0]):
                scale = im_info[i, 2]
                im_h, im_w = _c_round(im_info[i, 0] / scale), _c_round(im_info[i, 1] / scale)
                cand_box, cand_score, cand_cls = [], [], []
                for lvl in range(len(scores)):
                    sc = scores[lvl][i]                                             # [M, C]
                    c = sc.shape[1]
                    flat = sc.reshape(-1)
                    thr = score_thr if lvl < len(scores) - 1 else 0.0
                    idx = torch.nonzero(flat > thr).reshape(-1)
                    order = torch.sort(flat[idx], descending=True, stable=True).indices
                    idx = idx[order]
                    if top_k > -1:
                        idx = idx[:top_k]
                    a = idx // c
                    cand_box.append(decode(bboxes[lvl][i][a], anchors[lvl].reshape(-1, 4)[a], im_h, im_w, scale))
                    cand_score.append(flat[idx])
                    cand_cls.append(idx % c)
                box, score, cls = torch.cat(cand_box), torch.cat(cand_score), torch.cat(cand_cls)
                picked = []                     # (score, class, position) in class order, then NMS order
                for c in range(scores[0].shape[2]):
                    mine = torch.nonzero(cls == c).reshape(-1)
                    if not mine.numel():
                        continue
                    mine = mine[torch.sort(score[mine], descending=True, stable=True).indices]
                    for j in _greedy_nms(_jaccard_plus1(box[mine]), nms_thr, eta):
                        picked.append(int(mine[j]))
                picked = torch.tensor(picked, dtype=torch.int64, device=box.device)
                if picked.numel():
                    picked = picked[torch.sort(score[picked], descending=True, stable=True).indices]
                    if keep_k > -1:
                        picked = picked[:keep_k]
                rows.append(torch.cat([(cls[picked] + 1).to(box.dtype).unsqueeze(1), score[picked].unsqueeze(1),
                                       box[picked]], 1))
                counts.append(picked.numel())
            off = torch.tensor([0] + counts, device=scores[0].device).cumsum(0)
            return torch.cat(rows).to(scores[0].dtype).reshape(-1, 6), (off,)
    return k
