"""Metric ops: mean_iou, edit_distance (Levenshtein distance per sequence pair) and auc, Paddle's bucketed AUC with persistable bucket counts (and a sliding window of recent batches).

The statistics are a few thousand int64 counters updated by a batch of a few dozen predictions: numpy on
views of the CPU tensors does that with less per-call overhead than the same dozen torch calls (~60 us
against ~130 us per op here). Tensors on another device are copied to the host and back (the metric is
not on the training path).
"""

import numpy as np

from ...ir.lazy import torch, torch_dtype
from ..registry import attr, defop, OutMeta
from ..shapes import first


def bucket_auc(pos, neg):
    """Paddle's calcAuc: trapezoids from the highest bucket down, area += n_b * (P_b + P_b') / 2 with P_b
    the positives at or above bucket b and P_b' those above it, then area / P / N. Every term is an
    integer over 2, so the doubled area summed in int64 and halved once is Paddle's float64 result
    exactly (for fewer than 2**53 samples)."""
    num_pos, num_neg = int(pos.sum()), int(neg.sum())
    at_or_above = num_pos - np.cumsum(pos) + pos
    area = float(np.dot(neg, 2 * at_or_above - pos)) / 2.0
    if num_pos > 0 and num_neg > 0:
        area = area / float(num_pos) / float(num_neg)
    return area


def _host(t):
    return t.detach().numpy() if t.device.type == "cpu" else t.detach().cpu().numpy()


def _auc_shape(ins, attrs):
    pos, neg = first(ins, "StatPos"), first(ins, "StatNeg")
    return {"AUC": OutMeta((1,), "float64"), "StatPosOut": OutMeta(pos.shape, pos.dtype),
            "StatNegOut": OutMeta(neg.shape, neg.dtype)}


# The builder keeps its own outputs: the stats are persistable globals updated in place (StatPosOut is StatPos).
@defop("auc", inputs=("Predict", "Label", "StatPos", "StatNeg"), outputs=("AUC", "StatPosOut", "StatNegOut"),
       infer_shape=_auc_shape, differentiable=False, host="cpu")
def auc(op, ctx):
    # Paddle's auc kernel computes the ROC area whatever `curve` says; so do we.
    nt, slide = int(attr(op, "num_thresholds", 4095)), int(attr(op, "slide_steps", 1))
    bucket = nt + 1
    name = op.input("Predict")[0]

    def k(predict, label, stat_pos, stat_neg):
        pred = _host(predict)
        p = pred.reshape(pred.shape[0], -1)[:, -1]
        if not ((p >= 0) & (p <= 1)).all():
            raise ValueError("auc: the predictions (%s, last column) must lie in [0, 1]; got min %s, max %s"
                             % (name, p.min(), p.max()))
        bins = (p * np.float32(nt)).astype(np.int64)     # float32 product, truncated: Paddle's bucket index
        positive = _host(label).reshape(-1) != 0
        # one bincount for both: negatives in [0, bucket), positives in [bucket, 2 * bucket)
        counts = np.bincount(bins + positive * bucket, minlength=2 * bucket)
        pos, neg = counts[bucket:], counts[:bucket]
        sp, sn = _host(stat_pos).reshape(-1), _host(stat_neg).reshape(-1)
        if slide == 0:
            sp[:bucket] += pos
            sn[:bucket] += neg
            out = bucket_auc(sp[:bucket], sn[:bucket])
        else:
            # slide_steps buckets of recent batches, then their running sum, then the batch counter
            cur = (int(sp[(slide + 1) * bucket]) % slide) * bucket
            total = slide * bucket
            for s, new in ((sp, pos), (sn, neg)):
                s[total:total + bucket] -= s[cur:cur + bucket]
                s[cur:cur + bucket] = new
                s[total:total + bucket] += new
            out = bucket_auc(sp[total:total + bucket], sn[total:total + bucket])
            sp[(slide + 1) * bucket] += 1
            sn[(slide + 1) * bucket] += 1
        for t, arr in ((stat_pos, sp), (stat_neg, sn)):
            if t.device.type != "cpu" or not t.is_contiguous():   # we worked on a copy: write it back
                t.copy_(torch.from_numpy(arr).reshape(t.shape))
        return torch.tensor([out], dtype=torch.float64, device=predict.device), stat_pos, stat_neg
    return k


def _mean_iou_shape(ins, attrs):
    n = attrs["num_classes"]
    return {"OutMeanIou": OutMeta((1,), "float32"), "OutWrong": OutMeta((n,), "int32"),
            "OutCorrect": OutMeta((n,), "int32")}


@defop("mean_iou", inputs=("Predictions", "Labels", "InWrongs*", "InCorrects*", "InMeanIou*"),
       outputs=("OutMeanIou", "OutWrong", "OutCorrect"), infer_shape=_mean_iou_shape, differentiable=False,
       host="reads")
def mean_iou(op, ctx):
    n = attr(op, "num_classes")

    def k(pred, label, in_wrongs, in_corrects, in_means):
        p, lab = pred.reshape(-1).long(), label.reshape(-1).long()
        same = p == lab
        correct = torch.bincount(p[same], minlength=n)[:n]
        wrong = torch.bincount(p[~same], minlength=n)[:n] + torch.bincount(lab[~same], minlength=n)[:n]
        for w in in_wrongs:
            wrong = wrong + w.long()
        for c in in_corrects:
            correct = correct + c.long()
        denom = wrong + correct
        valid = (denom > 0).sum()
        iou = torch.where(denom > 0, correct.float() / denom.clamp(min=1).float(), torch.zeros(n, device=p.device))
        mean = iou.sum() / valid.clamp(min=1).float()
        for m in in_means:
            mean = mean + m.reshape(()).float()
        return mean.reshape(1), wrong.to(torch.int32), correct.to(torch.int32)
    return k


def _edit_distance_shape(ins, attrs):
    h = first(ins, "Hyps")
    n = first(ins, "HypsLength").shape[0] if first(ins, "HypsLength") is not None else -1
    if first(ins, "HypsLength") is None and h.lod_level == 0:
        n = h.shape[0]
    return {"Out": OutMeta((n, 1), "float32"), "SequenceNum": OutMeta((1,), "int64")}


def _levenshtein(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


@defop("edit_distance", inputs=("Hyps", "Refs", "HypsLength", "RefsLength"), outputs=("Out", "SequenceNum"),
       lod_in=("Hyps", "Refs"), infer_shape=_edit_distance_shape, differentiable=False, host="data")
def edit_distance(op, ctx):
    normalized = attr(op, "normalized", True)

    def k(hyps, refs, hl, rl, hyps_lod, refs_lod):
        if hl is not None:   # padded [batch, max_len] with lengths
            h_seqs = [hyps[i, :int(n)].reshape(-1).tolist() for i, n in enumerate(hl.reshape(-1).tolist())]
            r_seqs = [refs[i, :int(n)].reshape(-1).tolist() for i, n in enumerate(rl.reshape(-1).tolist())]
        else:
            if hyps_lod is None or refs_lod is None:
                raise ValueError("edit_distance: Hyps and Refs need LoD (or give input_length/label_length)")
            ho, ro = hyps_lod[-1].tolist(), refs_lod[-1].tolist()
            hf, rf = hyps.reshape(-1).tolist(), refs.reshape(-1).tolist()
            h_seqs = [hf[a:b] for a, b in zip(ho, ho[1:])]
            r_seqs = [rf[a:b] for a, b in zip(ro, ro[1:])]
        if len(h_seqs) != len(r_seqs):
            raise ValueError("edit_distance: %d hypotheses but %d references" % (len(h_seqs), len(r_seqs)))
        out = []
        for h, r in zip(h_seqs, r_seqs):
            d = float(_levenshtein(h, r))
            if normalized:
                if not r:
                    raise ValueError("edit_distance: a reference is empty, cannot normalize")
                d /= len(r)
            out.append(d)
        dev = hyps.device
        return (torch.tensor(out, dtype=torch.float32, device=dev).reshape(-1, 1),
                torch.tensor([len(out)], dtype=torch.int64, device=dev))
    return k
