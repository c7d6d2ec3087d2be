"""auc: Paddle's bucketed AUC with persistable bucket counts (and a sliding window of recent batches).

The statistics are a few thousand int64 counters updated by a batch of a few dozen predictions: numpy on
views of the CPU tensors does that with less per-call overhead than the same dozen torch calls (~60 us
against ~130 us per op here). Tensors on another device are copied to the host and back (the metric is
not on the training path).
"""

import numpy as np

from ...ir.lazy import torch
from ..registry import OutMeta, attr, defop
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
       infer_shape=_auc_shape, differentiable=False)
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
