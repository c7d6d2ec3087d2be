"""contrib.layers.ctr_metric_bundle: running sums for CTR metrics, built from ordinary ops."""

from ...layer_helper import LayerHelper
from ... import layers

__all__ = ["ctr_metric_bundle"]


def ctr_metric_bundle(input, label):
    """Adds this batch to six persistable running sums and returns them: (sum of squared errors, sum of
    absolute errors, sum of predictions, sum of sigmoid(prediction) (Paddle's q), positives, instances).
    MAE = abs / n, RMSE = sqrt(sq / n), predicted CTR = prob / n, q = q / n (all-reduce first when
    distributed)."""
    if tuple(input.shape) != tuple(label.shape):
        raise ValueError("ctr_metric_bundle: input %s and label %s must have one shape, got %s and %s"
                         % (input.name, label.name, list(input.shape), list(label.shape)))
    helper = LayerHelper("ctr_metric_bundle")
    names = ("sqrerr", "abserr", "prob", "q", "pos_num", "ins_num")
    local = [layers.create_global_var([1], 0.0, "float32", persistable=True, force_cpu=True,
                                      name="%s.local_%s" % (helper.name, n)) for n in names]
    diff = layers.elementwise_sub(input, label)
    batch = [layers.reduce_sum(layers.square(diff)), layers.reduce_sum(layers.abs(diff)), layers.reduce_sum(input),
             layers.reduce_sum(layers.sigmoid(input)), layers.reduce_sum(label),
             layers.reduce_sum(layers.fill_constant_batch_size_like(label, [-1, 1], "float32", 1.0))]
    for acc, b in zip(local, batch):
        helper.append_op(type="elementwise_add", inputs={"X": [b], "Y": [acc]}, outputs={"Out": [acc]},
                         attrs={"axis": -1})
    return tuple(local)
