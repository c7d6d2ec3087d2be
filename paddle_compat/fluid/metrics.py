"""fluid.metrics: Python-side accumulators over fetched numpy values (Paddle 1.x's classes)."""

import numpy as np

__all__ = ["MetricBase", "CompositeMetric", "Precision", "Recall", "Accuracy", "ChunkEvaluator", "EditDistance",
           "Auc", "DetectionMAP"]


def _is_number_or_matrix(x):
    return isinstance(x, (int, float, np.integer, np.floating, np.ndarray))


class MetricBase:
    def __init__(self, name):
        self._name = str(name) if name is not None else self.__class__.__name__

    def __str__(self):
        return self._name

    def reset(self):
        for k, v in list(self.__dict__.items()):
            if k.startswith("_"):
                continue
            if isinstance(v, (int, float)):
                setattr(self, k, type(v)(0))
            elif isinstance(v, np.ndarray):
                setattr(self, k, np.zeros_like(v))
            else:
                setattr(self, k, None)

    def get_config(self):
        return {"name": self._name, "states": {k: v for k, v in self.__dict__.items() if not k.startswith("_")}}

    def update(self, preds, labels):
        raise NotImplementedError

    def eval(self):
        raise NotImplementedError


class CompositeMetric(MetricBase):
    def __init__(self, name=None):
        super().__init__(name)
        self._metrics = []

    def add_metric(self, metric):
        if not isinstance(metric, MetricBase):
            raise ValueError("CompositeMetric.add_metric expects a MetricBase, got %r" % (metric,))
        self._metrics.append(metric)

    def update(self, preds, labels):
        for m in self._metrics:
            m.update(preds, labels)

    def eval(self):
        return [m.eval() for m in self._metrics]


class Precision(MetricBase):
    """Binary precision; preds are probabilities of class 1 (rounded at 0.5)."""

    def __init__(self, name=None):
        super().__init__(name)
        self.tp = 0
        self.fp = 0

    def update(self, preds, labels):
        p = np.rint(np.asarray(preds)).astype("int32").reshape(-1)
        y = np.asarray(labels).astype("int32").reshape(-1)
        self.tp += int(((p == 1) & (y == 1)).sum())
        self.fp += int(((p == 1) & (y != 1)).sum())

    def eval(self):
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0


class Recall(MetricBase):
    def __init__(self, name=None):
        super().__init__(name)
        self.tp = 0
        self.fn = 0

    def update(self, preds, labels):
        p = np.rint(np.asarray(preds)).astype("int32").reshape(-1)
        y = np.asarray(labels).astype("int32").reshape(-1)
        self.tp += int(((p == 1) & (y == 1)).sum())
        self.fn += int(((p != 1) & (y == 1)).sum())

    def eval(self):
        recall = self.tp + self.fn
        return float(self.tp) / recall if recall != 0 else 0.0


class Accuracy(MetricBase):
    """Weighted mean of per-batch accuracies: update(value=batch_acc, weight=batch_size)."""

    def __init__(self, name=None):
        super().__init__(name)
        self.value = 0.0
        self.weight = 0.0

    def update(self, value, weight):
        if not _is_number_or_matrix(value):
            raise ValueError("The 'value' must be a number(int, float) or a numpy ndarray.")
        if not _is_number_or_matrix(weight):
            raise ValueError("The 'weight' must be a number(int, float) or a numpy ndarray.")
        self.value += float(np.sum(value)) * float(np.sum(weight))
        self.weight += float(np.sum(weight))

    def eval(self):
        if self.weight == 0:
            raise ValueError("There is no data in Accuracy Metrics. Please check layers.accuracy output has added "
                             "to Accuracy.")
        return self.value / self.weight


class ChunkEvaluator(MetricBase):
    def __init__(self, name=None):
        super().__init__(name)
        self.num_infer_chunks = 0
        self.num_label_chunks = 0
        self.num_correct_chunks = 0

    def update(self, num_infer_chunks, num_label_chunks, num_correct_chunks):
        self.num_infer_chunks += int(np.sum(num_infer_chunks))
        self.num_label_chunks += int(np.sum(num_label_chunks))
        self.num_correct_chunks += int(np.sum(num_correct_chunks))

    def eval(self):
        precision = float(self.num_correct_chunks) / self.num_infer_chunks if self.num_infer_chunks else 0.0
        recall = float(self.num_correct_chunks) / self.num_label_chunks if self.num_label_chunks else 0.0
        f1 = float(2 * precision * recall) / (precision + recall) if self.num_correct_chunks else 0.0
        return precision, recall, f1


class EditDistance(MetricBase):
    def __init__(self, name=None):
        super().__init__(name)
        self.total_distance = 0.0
        self.seq_num = 0
        self.instance_error = 0

    def update(self, distances, seq_num):
        d = np.asarray(distances)
        self.seq_num += int(seq_num)
        self.instance_error += int(seq_num) - int(np.sum(d == 0))
        self.total_distance += float(np.sum(d))

    def eval(self):
        if self.seq_num == 0:
            raise ValueError("There is no data in EditDistance Metric. Please check layers.edit_distance output "
                             "has been added to EditDistance.")
        return self.total_distance / self.seq_num, self.instance_error / float(self.seq_num)


class Auc(MetricBase):
    """Bucketed AUC as Paddle computes it: preds [N, 2] probabilities (column 1 = positive), labels [N, 1]."""

    def __init__(self, name=None, curve="ROC", num_thresholds=4095):
        super().__init__(name)
        self._curve = curve
        self._num_thresholds = num_thresholds
        # Python lists of counts, as Paddle keeps them (its op tests build the op's expected stats from them)
        self._stat_pos = [0] * (num_thresholds + 1)
        self._stat_neg = [0] * (num_thresholds + 1)

    def reset(self):
        self._stat_pos = [0] * (self._num_thresholds + 1)
        self._stat_neg = [0] * (self._num_thresholds + 1)

    def update(self, preds, labels):
        p = np.asarray(preds)
        p = p[:, 1] if p.ndim == 2 and p.shape[1] == 2 else p.reshape(-1)
        y = np.asarray(labels).reshape(-1)
        idx = (p * self._num_thresholds).astype(np.int64)
        n = self._num_thresholds + 1
        self._stat_pos = (np.asarray(self._stat_pos, dtype=np.int64) +
                          np.bincount(idx[y != 0], minlength=n)[:n]).tolist()
        self._stat_neg = (np.asarray(self._stat_neg, dtype=np.int64) +
                          np.bincount(idx[y == 0], minlength=n)[:n]).tolist()

    def eval(self):
        tot_pos = tot_neg = 0.0
        auc = 0.0
        for i in range(self._num_thresholds, -1, -1):
            pos, neg = tot_pos + self._stat_pos[i], tot_neg + self._stat_neg[i]
            auc += (neg - tot_neg) * (pos + tot_pos) / 2.0
            tot_pos, tot_neg = pos, neg
        return auc / tot_pos / tot_neg if tot_pos > 0 and tot_neg > 0 else 0.0


from .detection_map_metric import DetectionMAP  # noqa: E402  (it builds ops: kept in its own module)
