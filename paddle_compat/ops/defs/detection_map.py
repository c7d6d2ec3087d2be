"""detection_map: the mean average precision of detections against labelled boxes, per batch or accumulated
over batches through its state tensors (fluid.metrics.DetectionMAP), computed as Paddle 1.8's kernel does:

  * per image, ground-truth boxes by label (Label rows: label, [difficult,] xmin, ymin, xmax, ymax) and
    detections by label (DetectRes rows: label, score, xmin, ymin, xmax, ymax);
  * a label's positives: its ground-truth boxes (without the difficult ones unless evaluate_difficult);
  * detections of a label, by descending score, each clipped to [0, 1]: a true positive when its best
    Jaccard overlap with that label's boxes exceeds overlap_threshold and that box is not taken yet (a
    difficult box, when not evaluated, counts neither way), else a false positive;
  * the states: positives per class ([class_num, 1]) and (score, flag) rows of true and false positives whose
    LoD groups them by class; HasState=1 adds this batch to them;
  * AP per label with positives and detections ('integral': precision summed over the recall steps;
    '11point': the best precision at recall >= 0, 0.1, ... 1, averaged), their mean is MAP.
Paddle skips a label whose number of positives equals background_label (it means to skip the background
class; with the default 0 that skips labels without positives): kept, it is what 1.8.5 answers.
"""

import numpy as np

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop


def _shape(ins, attrs):
    n = int(attrs.get("class_num", 1))
    return {"MAP": OutMeta((1,), "float32"), "AccumPosCount": OutMeta((n, 1), "int32"),
            "AccumTruePos": OutMeta((-1, 2), "float32", 1), "AccumFalsePos": OutMeta((-1, 2), "float32", 1)}


def _np(t):
    return None if t is None else t.detach().cpu().numpy()


def _offsets(lod, rows, what):
    if not lod:
        raise ValueError("detection_map: %s needs a LoD of one level (its rows per image)" % what)
    off = [int(v) for v in _np(lod[-1]).tolist()]
    if off[0] != 0 or off[-1] != rows:
        raise ValueError("detection_map: %s's LoD %s does not cover its %d rows" % (what, off, rows))
    return off


def _jaccard(a, b):
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return np.float32(0.0)
    iw = np.float32(min(a[2], b[2]) - max(a[0], b[0]))
    ih = np.float32(min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih

    def area(r):
        return np.float32(0.0) if r[2] < r[0] or r[3] < r[1] else np.float32((r[2] - r[0]) * (r[3] - r[1]))
    return inter / (area(a) + area(b) - inter)


def _ap(pairs_tp, pairs_fp, num_pos, ap_type):
    # the pairs sorted by descending score, ties in their order (a stable sort, as Paddle's)
    tp = [f for _, f in sorted(pairs_tp, key=lambda p: -p[0])]
    fp = [f for _, f in sorted(pairs_fp, key=lambda p: -p[0])]
    tp_sum, fp_sum = np.cumsum(tp), np.cumsum(fp)
    precision = [np.float32(t) / np.float32(t + f) for t, f in zip(tp_sum, fp_sum)]
    recall = [np.float32(t) / np.float32(num_pos) for t in tp_sum]
    if ap_type == "11point":
        best = [np.float32(0.0)] * 11
        start = len(tp) - 1
        for j in range(10, -1, -1):
            for i in range(start, -1, -1):
                if recall[i] < j / 10.0:
                    start = i
                    if j > 0:
                        best[j - 1] = best[j]
                    break
                if best[j] < precision[i]:
                    best[j] = precision[i]
        return sum((b / np.float32(11) for b in reversed(best)), np.float32(0.0))
    ap, prev = np.float32(0.0), np.float32(0.0)
    for p, r in zip(precision, recall):
        if abs(r - prev) > 1e-6:
            ap += p * np.float32(abs(r - prev))
        prev = r
    return ap


# The states are read from the scope when the op runs (as Paddle's kernel reads its inputs, and only when
# HasState is set): an accumulating detection_map writes the states it reads, and they hold nothing before
# the first batch, so they cannot be inputs the lowering resolves once.
@defop("detection_map", inputs=("DetectRes", "Label", "HasState"),
       outputs=("MAP", "AccumPosCount", "AccumTruePos", "AccumFalsePos"),
       lod_in=("DetectRes", "Label"), lod_out=("AccumTruePos", "AccumFalsePos"),
       infer_shape=_shape, differentiable=False, host="data")
def detection_map(op, ctx):
    class_num = int(attr(op, "class_num", 0))
    background = int(attr(op, "background_label", 0))
    threshold = np.float32(attr(op, "overlap_threshold", 0.5))
    evaluate_difficult = bool(attr(op, "evaluate_difficult", True))
    ap_type = attr(op, "ap_type", "integral")
    if ap_type not in ("integral", "11point"):
        raise ValueError("detection_map: ap_type must be 'integral' or '11point', got %r" % (ap_type,))
    state_names = [op.input(s)[0] if op.input(s) else None for s in ("PosCount", "TruePos", "FalsePos")]

    def states():
        """(PosCount, TruePos, TruePos's LoD, FalsePos, FalsePos's LoD) from the scope, or None."""
        if ctx.scope is None or None in state_names:
            return None
        holders = [ctx.scope.find_var(n) for n in state_names]
        if any(h is None or h.value is None for h in holders):
            return None
        return (holders[0].value, holders[1].value, holders[1].lod, holders[2].value, holders[2].lod)

    def k(detect, label, has_state, detect_lod, label_lod):
        det, lab = _np(detect).astype(np.float32), _np(label).astype(np.float32)
        d_off, l_off = _image_offsets(det, lab, detect_lod, label_lod)
        state = states() if has_state is not None and int(_np(has_state).reshape(-1)[0]) else None
        pos, tps, fps = _read_states(state, class_num)
        for n in range(len(l_off) - 1):
            gts = _ground_truth_by_label(lab[l_off[n]:l_off[n + 1]], lab.shape[1] == 6)
            _count_positives(pos, gts, evaluate_difficult)
            dets = {}
            for row in det[d_off[n]:d_off[n + 1]]:
                dets.setdefault(int(row[0]), []).append((float(row[1]), row[2:6]))
            for c in sorted(dets):
                _true_false_positives(dets[c], gts.get(c), tps.setdefault(c, []), fps.setdefault(c, []),
                                      threshold, evaluate_difficult)
        m = _mean_ap(pos, tps, fps, background, ap_type)
        return (torch.tensor([m], dtype=torch.float32),) + _state_outputs(pos, tps, fps, class_num)
    return k


def _image_offsets(det, lab, detect_lod, label_lod):
    """The rows of each image in DetectRes and Label, checked to cover both and to agree on the images."""
    if lab.shape[1] not in (5, 6):
        raise ValueError("detection_map: Label rows hold 5 or 6 values (label, [difficult,] box), got %d"
                         % lab.shape[1])
    d_off, l_off = _offsets(detect_lod, det.shape[0], "DetectRes"), _offsets(label_lod, lab.shape[0], "Label")
    if len(d_off) != len(l_off):
        raise ValueError("detection_map: %d images of detections but %d of labels"
                         % (len(d_off) - 1, len(l_off) - 1))
    return d_off, l_off


def _read_states(state, class_num):
    """The accumulated states as dicts by class: positives, and (score, flag) lists of true and false positives
    (all empty without a state)."""
    pos, tps, fps = {}, {}, {}
    if state is None:
        return pos, tps, fps
    pos_count, true_pos, tp_lod, false_pos, fp_lod = state
    counts = _np(pos_count).reshape(-1)
    for c in range(class_num):
        pos[c] = int(counts[c])
    for store, t, lod in ((tps, true_pos, tp_lod), (fps, false_pos, fp_lod)):
        rows = _np(t).reshape(-1, 2)
        off = [int(v) for v in (lod[-1].tolist() if lod else [0])]
        for c in range(len(off) - 1):
            store[c] = [(float(s), int(f)) for s, f in rows[off[c]:off[c + 1]]]
    return pos, tps, fps


def _ground_truth_by_label(rows, with_difficult):
    """One image's boxes by label: [(box, difficult)]."""
    gts = {}
    for row in rows:
        difficult = with_difficult and abs(float(row[1])) >= 1e-6
        gts.setdefault(int(row[0]), []).append((row[-4:], difficult))
    return gts


def _count_positives(pos, gts, evaluate_difficult):
    for c in sorted(gts):
        count = len(gts[c]) if evaluate_difficult else sum(1 for _, d in gts[c] if not d)
        if count:
            pos[c] = pos.get(c, 0) + count


def _true_false_positives(dets, boxes, tp, fp, threshold, evaluate_difficult):
    """Appends one image's detections of a label (score, box) to that label's true and false positives;
    boxes: the image's ground truth of that label (None: none, every detection is a false positive)."""
    if boxes is None:
        for score, _ in dets:
            tp.append((score, 0))
            fp.append((score, 1))
        return
    taken = [False] * len(boxes)
    for score, box in sorted(dets, key=lambda p: -p[0]):
        box = np.clip(box, 0.0, 1.0)
        overlaps = [_jaccard(box, b) for b, _ in boxes]
        j = int(np.argmax(overlaps))
        if overlaps[j] > threshold:
            if evaluate_difficult or not boxes[j][1]:
                hit = not taken[j]
                taken[j] = True
                tp.append((score, int(hit)))
                fp.append((score, int(not hit)))
        else:
            tp.append((score, 0))
            fp.append((score, 1))


def _mean_ap(pos, tps, fps, background, ap_type):
    total, count = np.float32(0.0), 0
    for c in sorted(pos):
        if pos[c] == background or c not in tps:    # (Paddle compares the count: see the module's notes)
            continue
        total += _ap(tps[c], fps[c], pos[c], ap_type)
        count += 1
    return total / np.float32(count) if count else total


def _state_outputs(pos, tps, fps, class_num):
    """AccumPosCount, AccumTruePos, AccumFalsePos and the two LoDs (the rows of each class)."""
    counts = np.zeros((class_num, 1), np.int32)
    for c, v in pos.items():
        if 0 <= c < class_num:
            counts[c, 0] = v
    outs = []
    for store in (tps, fps):
        rows, off = [], [0]
        for c in range(class_num):
            rows.extend(store.get(c, []))
            off.append(len(rows))
        outs.append((torch.tensor(np.array(rows, np.float32).reshape(-1, 2)),
                     (torch.tensor(off, dtype=torch.int64),)))
    return torch.from_numpy(counts), outs[0][0], outs[1][0], outs[0][1], outs[1][1]
