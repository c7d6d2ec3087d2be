"""Detection ops of Paddle 1.8's fluid.layers.detection: sigmoid_focal_loss, roi_perspective_transform,
retinanet_target_assign and retinanet_detection_output. Compile-time shapes follow Paddle 1.8.5's (checked by
building the layers there)."""

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
       infer_shape=_retinanet_assign_shape, differentiable=False)
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
       infer_shape=_retinanet_output_shape, differentiable=False)
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


def _rpt_shape(ins, attrs):
    x, rois = first(ins, "X"), first(ins, "ROIs")
    th, tw = int(attrs["transformed_height"]), int(attrs["transformed_width"])
    n = rois.shape[0]
    return {"Out": OutMeta((n, x.shape[1], th, tw), x.dtype, rois.lod_level),
            "Mask": OutMeta((n, 1, th, tw), "int32"), "TransformMatrix": OutMeta((n, 9), x.dtype),
            "Out2InIdx": OutMeta((n, x.shape[1], th, tw), "int32"),
            "Out2InWeights": OutMeta((n, x.shape[1], th, tw), x.dtype)}


_TOL = 1e-4     # Paddle's tolerance for "equal" coordinates (GT_E / LT_E / GT)


def _ge(a, b):
    return (a > b) | ((a - b).abs() < _TOL)


def _le(a, b):
    return (a < b) | ((a - b).abs() < _TOL)


def _c_round(t):
    return torch.sign(t) * torch.floor(t.abs() + 0.5)


def _rpt_matrix(rx, ry, th, tw):
    """Paddle's perspective matrix [R, 9] mapping output (w, h, 1) to the quad (rx, ry) [R, 4], float32 with
    the float64 steps where Paddle's C++ promotes (the 1e-5 and the / 2.0)."""
    x0, x1, x2, x3 = rx.unbind(1)
    y0, y1, y2, y3 = ry.unbind(1)
    side = lambda xa, ya, xb, yb: torch.sqrt((xa - xb) * (xa - xb) + (ya - yb) * (ya - yb))  # noqa: E731
    est_h = ((side(x1, y1, x2, y2) + side(x3, y3, x0, y0)).double() / 2.0).float()
    est_w = ((side(x0, y0, x1, y1) + side(x2, y2, x3, y3)).double() / 2.0).float()
    nh = max(2, th)
    nw = (_c_round(est_w * float(nh - 1) / est_h) + 1).clamp(max=tw).clamp(min=2)          # [R], whole numbers
    nwf, nhf = nw - 1, torch.full_like(nw, float(nh - 1))
    dx1, dx2, dx3 = x1 - x2, x3 - x2, x0 - x1 + x2 - x3
    dy1, dy2, dy3 = y1 - y2, y3 - y2, y0 - y1 + y2 - y3
    den = (dx1 * dy2 - dx2 * dy1).double() + 1e-5
    m6 = ((dx3 * dy2 - dx2 * dy3).double() / den / nwf.double()).float()
    m7 = ((dx1 * dy3 - dx3 * dy1).double() / den / float(nh - 1)).float()
    m3 = (y1 - y0 + m6 * nwf * y1) / nwf
    m4 = (y3 - y0 + m7 * nhf * y3) / nhf
    m0 = (x1 - x0 + m6 * nwf * x1) / nwf
    m1 = (x3 - x0 + m7 * nhf * x3) / nhf
    return torch.stack([m0, m1, x0, m3, m4, y0, m6, m7, torch.ones_like(m6)], 1)


def _in_quad(x, y, rx, ry):
    """Paddle's in_quad for points (x, y) [R, P] and quads [R, 4]: on an edge (within 1e-4), or an odd number
    of edge crossings to the right."""
    on = torch.zeros_like(x, dtype=torch.bool)
    crossings = torch.zeros_like(x, dtype=torch.int64)
    for i in range(4):
        xs, ys = rx[:, i:i + 1], ry[:, i:i + 1]
        xe, ye = rx[:, (i + 1) % 4:(i + 1) % 4 + 1], ry[:, (i + 1) % 4:(i + 1) % 4 + 1]
        flat = (ys - ye).abs() < _TOL
        ix = (y - ys) * (xe - xs) / torch.where(flat, torch.ones_like(ye), ye - ys) + xs
        lo_y, hi_y = torch.minimum(ys, ye), torch.maximum(ys, ye)
        on_flat = ((y - ys).abs() < _TOL) & ((y - ye).abs() < _TOL) & _ge(x, torch.minimum(xs, xe)) & \
            _le(x, torch.maximum(xs, xe))
        near = (ix - x).abs() < _TOL
        on_slope = near & _ge(y, lo_y) & _le(y, hi_y)
        on = on | torch.where(flat, on_flat, on_slope)
        spans = ~flat & ~(_le(y, lo_y) | ((y - hi_y) > _TOL))
        on = on | (spans & near)
        crossings = crossings + (spans & ((ix - x) > _TOL)).to(torch.int64)
    return on | (crossings % 2 == 1)


# Out[r, c, h, w]: bilinear sample of image r's X at the matrix's source point of (w, h), 0 (and Mask 0) where
# that point is outside the quad or the map. Out2InIdx/Out2InWeights stay 0, as Paddle's CPU kernel leaves them.
# X's gradient is autograd's through the bilinear gather (the same weights as Paddle's CPU grad kernel).
@defop("roi_perspective_transform", inputs=("X", "ROIs"),
       outputs=("Out", "Mask", "TransformMatrix", "Out2InIdx", "Out2InWeights"), lod_in=("ROIs",),
       infer_shape=_rpt_shape, no_grad=("ROIs",))
def roi_perspective_transform(op, ctx):
    th, tw = int(attr(op, "transformed_height")), int(attr(op, "transformed_width"))
    scale = float(attr(op, "spatial_scale", 1.0))

    def k(x, rois, lod):
        from .roi_ops import _batch_index
        bidx = _batch_index(op, x, rois, lod)
        n, c, height, width = x.shape
        r = rois.detach().to(torch.float32).reshape(-1, 8) * torch.tensor(scale, dtype=torch.float32)
        rx, ry = r[:, 0::2], r[:, 1::2]
        m = _rpt_matrix(rx, ry, th, tw)                                              # [R, 9]
        hh, ww = torch.meshgrid(torch.arange(th, dtype=torch.float32, device=x.device),
                                torch.arange(tw, dtype=torch.float32, device=x.device), indexing="ij")
        hh, ww = hh.reshape(1, -1), ww.reshape(1, -1)                               # [1, P]
        col = lambda i: m[:, i:i + 1]  # noqa: E731
        u = col(0) * ww + col(1) * hh + col(2)
        v = col(3) * ww + col(4) * hh + col(5)
        z = col(6) * ww + col(7) * hh + col(8)
        in_w, in_h = u / z, v / z                                                   # [R, P]
        outside = _ge(torch.tensor(-0.5), in_w) | _ge(in_w, torch.tensor(float(width) - 0.5)) | \
            _ge(torch.tensor(-0.5), in_h) | _ge(in_h, torch.tensor(float(height) - 0.5))
        keep = _in_quad(in_w, in_h, rx, ry) & ~outside
        in_w = torch.where(_ge(torch.tensor(0.0), in_w), torch.zeros_like(in_w), in_w)
        in_h = torch.where(_ge(torch.tensor(0.0), in_h), torch.zeros_like(in_h), in_h)
        wf, hf = torch.floor(in_w), torch.floor(in_h)
        w_edge, h_edge = wf >= width - 1, hf >= height - 1
        wf = torch.where(w_edge, torch.full_like(wf, width - 1), wf)
        hf = torch.where(h_edge, torch.full_like(hf, height - 1), hf)
        in_w = torch.where(w_edge, wf, in_w)
        in_h = torch.where(h_edge, hf, in_h)
        wc = torch.where(w_edge, wf, wf + 1)
        hc = torch.where(h_edge, hf, hf + 1)
        lw, lh = in_w - wf, in_h - hf
        uw, uh = 1 - lw, 1 - lh
        safe = lambda t, hi: t.clamp(0, hi).long()  # noqa: E731 (taps of dropped points are masked below)
        base = (bidx.view(-1, 1, 1) * c + torch.arange(c, device=x.device).view(1, -1, 1)) * (height * width)
        flat = x.reshape(-1)
        acc = 0
        for yy, xx, wgt in ((hf, wf, uw * uh), (hc, wf, uw * lh), (hc, wc, lw * lh), (hf, wc, lw * uh)):
            pix = (safe(yy, height - 1) * width + safe(xx, width - 1)).unsqueeze(1)  # [R, 1, P]
            acc = acc + flat[base + pix] * (wgt * keep.to(wgt.dtype)).unsqueeze(1).to(x.dtype)
        rn = r.shape[0]
        out = acc.reshape(rn, c, th, tw)
        mask = keep.to(torch.int32).reshape(rn, 1, th, tw)
        zeros_i = torch.zeros(rn, c, th, tw, dtype=torch.int32, device=x.device)
        return out, mask, m.to(x.dtype), zeros_i, torch.zeros_like(out).detach()
    return k
