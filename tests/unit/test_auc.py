"""fluid.layers.auc against a numpy re-computation of Paddle's bucketed AUC (global and sliding window),
and accuracy on a CTR-style softmax output."""

import numpy as np
import pytest

import paddle_compat as fluid

PLACE = fluid.CPUPlace()


def np_bucket_auc(preds, labels, num_thresholds):
    """Paddle's auc op, the slow obvious way: bucket = int(float32(p) * num_thresholds), then trapezoids
    walking the buckets from the top, in float64."""
    pos = np.zeros(num_thresholds + 1, np.int64)
    neg = np.zeros(num_thresholds + 1, np.int64)
    for p, y in zip(preds, labels):
        b = int(np.float32(p) * np.float32(num_thresholds))
        if y:
            pos[b] += 1
        else:
            neg[b] += 1
    area, tot_pos, tot_neg = 0.0, 0.0, 0.0
    for b in range(num_thresholds, -1, -1):
        prev_pos, prev_neg = tot_pos, tot_neg
        tot_pos += pos[b]
        tot_neg += neg[b]
        area += abs(tot_neg - prev_neg) * (tot_pos + prev_pos) / 2.0
    if tot_pos > 0 and tot_neg > 0:
        area = area / tot_pos / tot_neg
    return area, pos, neg


def _batches(n_batches, batch, seed=0):
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(n_batches):
        p1 = rng.uniform(0, 1, batch).astype(np.float32)
        p1[:3] = [0.0, 1.0, 0.5]                        # bucket edges
        label = (rng.uniform(0, 1, batch) < p1).astype(np.int64).reshape(-1, 1)
        out.append((np.stack([1 - p1, p1], 1), label))
    return out


@pytest.mark.parametrize("slide_steps", [1, 3])
def test_auc_global_and_sliding_window(slide_steps):
    nt = 200
    predict = fluid.layers.data(name="predict", shape=[2], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    auc, batch_auc, states = fluid.layers.auc(predict, label, num_thresholds=nt, slide_steps=slide_steps)
    batch_pos, batch_neg, stat_pos, stat_neg = states
    assert all(v.persistable and v.dtype == fluid.core.VarDesc.VarType.INT64 for v in states)
    assert list(batch_pos.shape) == [(1 + slide_steps) * (nt + 1) + 1]
    assert list(stat_pos.shape) == [1, nt + 1]
    assert auc.dtype == fluid.core.VarDesc.VarType.FP64
    exe = fluid.Executor(PLACE)
    exe.run(fluid.default_startup_program())
    batches = _batches(6, 40)
    for i, (pred, lab) in enumerate(batches):
        a, b, bp, sp, sn = exe.run(feed={"predict": pred, "label": lab},
                                   fetch_list=[auc, batch_auc, batch_pos, stat_pos, stat_neg])
        seen = batches[:i + 1]
        want, pos, neg = np_bucket_auc(np.concatenate([p[:, 1] for p, _ in seen]),
                                       np.concatenate([l.reshape(-1) for _, l in seen]), nt)
        assert a[0] == want                          # exact: integer counts, same float64 steps
        np.testing.assert_array_equal(sp.reshape(-1), pos)
        np.testing.assert_array_equal(sn.reshape(-1), neg)
        window = batches[max(0, i + 1 - slide_steps):i + 1]
        want_b, wpos, _ = np_bucket_auc(np.concatenate([p[:, 1] for p, _ in window]),
                                        np.concatenate([l.reshape(-1) for _, l in window]), nt)
        assert b[0] == want_b
        bucket = nt + 1
        np.testing.assert_array_equal(bp[slide_steps * bucket:(slide_steps + 1) * bucket], wpos)  # running sum
        assert bp[-1] == i + 1                        # the batch counter in the last slot


def test_auc_one_column_input_and_degenerate_batches():
    predict = fluid.layers.data(name="p", shape=[1], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    auc, batch_auc, _ = fluid.layers.auc(predict, label, num_thresholds=100)
    exe = fluid.Executor(PLACE)
    exe.run(fluid.default_startup_program())
    only_pos = exe.run(feed={"p": np.array([[0.2], [0.9]], np.float32), "label": np.array([[1], [1]])},
                       fetch_list=[auc, batch_auc])
    assert only_pos[0][0] == 0.0 and only_pos[1][0] == 0.0      # no negatives yet: Paddle reports 0
    a, b = exe.run(feed={"p": np.array([[0.1], [0.95]], np.float32), "label": np.array([[0], [0]])},
                   fetch_list=[auc, batch_auc])
    want, _, _ = np_bucket_auc([0.2, 0.9, 0.1, 0.95], [1, 1, 0, 0], 100)
    assert a[0] == want == 0.5 and b[0] == 0.0
    with pytest.raises(RuntimeError, match=r"lie in \[0, 1\]"):
        exe.run(feed={"p": np.array([[1.5]], np.float32), "label": np.array([[1]])}, fetch_list=[auc])


def test_auc_restarts_with_the_startup_program_and_in_test_clone():
    predict = fluid.layers.data(name="predict", shape=[2], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    auc, _, _ = fluid.layers.auc(predict, label)
    test = fluid.default_main_program().clone(for_test=True)
    exe = fluid.Executor(PLACE)
    exe.run(fluid.default_startup_program())
    (p1, l1), (p2, l2) = _batches(2, 64, seed=3)
    exe.run(feed={"predict": p1, "label": l1}, fetch_list=[auc])
    both, = exe.run(test, feed={"predict": p2, "label": l2}, fetch_list=[auc])
    want, _, _ = np_bucket_auc(np.concatenate([p1[:, 1], p2[:, 1]]), np.concatenate([l1, l2]).reshape(-1), 4095)
    assert both[0] == want                            # the test clone shares the statistics
    exe.run(fluid.default_startup_program())
    fresh, = exe.run(feed={"predict": p2, "label": l2}, fetch_list=[auc])
    assert fresh[0] == np_bucket_auc(p2[:, 1], l2.reshape(-1), 4095)[0]


def test_accuracy_on_softmax_output():
    predict = fluid.layers.data(name="predict", shape=[2], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    correct = fluid.layers.create_tensor(dtype="int64")
    total = fluid.layers.create_tensor(dtype="int64")
    acc = fluid.layers.accuracy(input=predict, label=label, correct=correct, total=total)
    exe = fluid.Executor(PLACE)
    p = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]], np.float32)
    l = np.array([[0], [1], [1], [1]], np.int64)
    a, c, t = exe.run(feed={"predict": p, "label": l}, fetch_list=[acc, correct, total])
    assert a[0] == pytest.approx(0.75) and c[0] == 3 and t[0] == 4
