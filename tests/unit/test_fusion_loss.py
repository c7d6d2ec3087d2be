"""softmax + cross_entropy + mean lowered as one autograd node (backends/lowering/fusion_loss.py): bit for bit the
three ops' numbers (losses, gradients, trained parameters), ignored labels included, and no fusion where the
softmax output or the per-row loss is needed elsewhere (fetched, read by another op, its gradient wanted)."""

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.backends.lowering import fusion, fusion_loss
from paddle_compat.backends.lowering.codegen import OpRunError, lower_block

RS = np.random.RandomState(7)
X = RS.uniform(-1, 1, (12, 6)).astype(np.float32)
LABEL = RS.randint(0, 4, (12, 1)).astype(np.int64)


def _program(ignore_index=-100, extra=None):
    """fc(softmax) -> cross_entropy -> mean -> SGD; extra(main, predict, per_row_loss) adds readers."""
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 11
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[6], dtype="float32")
        label = fluid.layers.data("label", shape=[1], dtype="int64")
        h = fluid.layers.fc(x, 5, act="relu")
        predict = fluid.layers.fc(h, 4, act="softmax")
        ce = fluid.layers.cross_entropy(predict, label, ignore_index=ignore_index)
        loss = fluid.layers.mean(ce)
        if extra is not None:
            loss = extra(predict, ce, loss)
        fluid.optimizer.SGD(learning_rate=0.5).minimize(loss)
    return main, start, predict, ce, loss


def _loss_fusions(main, fetch=()):
    return [op for op in fusion.plan(main.global_block(), fetch).values()
            if op is not None and op.type == fusion_loss.FUSED_SOFTMAX_CE_MEAN]


def _steps(main, start, fetch, label, fuse, steps=3, monkeypatch=None):
    """Per step the fetched arrays, then every parameter, lowered with the loss fusion (fuse) or with every
    fusion but that one (the fc and optimizer fusions round differently from their unfused ops)."""
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(start, scope=scope)
    if fuse:
        lowered = lower_block(main, 0, scope, "cpu", ["x", "label"], fetch)
    else:
        with monkeypatch.context() as m:
            m.setattr(fusion_loss, "plan", lambda *a, **k: {})
            lowered = lower_block(main, 0, scope, "cpu", ["x", "label"], fetch)
    got = []
    for _ in range(steps):
        got.append([t.detach().numpy().copy() for t, _ in lowered([torch.from_numpy(X), torch.from_numpy(label)])])
    params = {p.name: scope.find_var(p.name).value.detach().numpy().copy()
              for p in main.global_block().all_parameters()}
    return got, params, lowered


def _same(a, b):
    (ga, pa, _), (gb, pb, _) = a, b
    for sa, sb in zip(ga, gb):
        for x, y in zip(sa, sb):
            np.testing.assert_array_equal(x, y)
    assert sorted(pa) == sorted(pb)
    for n in pa:
        np.testing.assert_array_equal(pa[n], pb[n], err_msg=n)


@pytest.mark.parametrize("ignore_index, label, scale", [
    (-100, LABEL, None),                                        # no ignored row: no mask at all
    (-100, np.where(np.arange(12)[:, None] % 3 == 0, -100, LABEL), None),   # ignored rows outside [0, C)
    (2, LABEL, None),                                           # ignore_index in range: masked
    (-100, LABEL, 0.3),                     # the mean's gradient is not 1 (0.3 / 12 is not 0.3 * (1 / 12))
])
def test_fused_loss_gives_the_three_ops_numbers_bit_for_bit(ignore_index, label, scale, monkeypatch):
    extra = (lambda p, c, l: fluid.layers.scale(l, scale)) if scale else None
    main, start, predict, ce, loss = _program(ignore_index, extra)
    fc_w = main.global_block().all_parameters()[-2].name
    fetch = [loss.name, fc_w + "@GRAD"]
    assert len(_loss_fusions(main, fetch)) == 1
    fused = _steps(main, start, fetch, label, True)
    assert "fused_softmax_cross_entropy_mean" in fused[2].code
    unfused = _steps(main, start, fetch, label, False, monkeypatch=monkeypatch)
    assert "fused_softmax_cross_entropy_mean" not in unfused[2].code
    _same(fused, unfused)
    if ignore_index == 2 or label is not LABEL:
        # the ignored rows count in the mean with a loss of 0 (Paddle's mean over all rows)
        keep = (label != ignore_index).ravel()
        assert 0 < keep.sum() < len(keep)
    assert np.isfinite(fused[0][0][0]).all() and fused[0][0][0].shape == (1,)


def test_a_label_out_of_range_still_fails():
    main, start, predict, ce, loss = _program()
    bad = LABEL.copy()
    bad[3] = 4              # C is 4
    with pytest.raises(OpRunError, match="out of bounds"):
        _steps(main, start, [loss.name], bad, True, steps=1)


def test_softmax_or_row_loss_needed_elsewhere_is_not_fused(monkeypatch):
    main, start, predict, ce, loss = _program()
    assert _loss_fusions(main, [predict.name]) == []
    assert _loss_fusions(main, [ce.name]) == []
    assert _loss_fusions(main, [predict.name + "@GRAD"]) == []
    assert len(_loss_fusions(main, [loss.name])) == 1
    # the softmax output read by another op: the three ops run by themselves, with the same numbers as unfused
    main, start, predict, ce, loss = _program(extra=lambda p, c, l: l + 0.0 * fluid.layers.reduce_sum(p))
    assert _loss_fusions(main, [loss.name]) == []
    _same(_steps(main, start, [loss.name], LABEL, True),
          _steps(main, start, [loss.name], LABEL, False, monkeypatch=monkeypatch))
    # the per-row loss read by another op
    main, start, predict, ce, loss = _program(extra=lambda p, c, l: l + fluid.layers.reduce_max(c))
    assert _loss_fusions(main, [loss.name]) == []


def test_the_fused_loss_runs_under_no_grad_as_a_test_program():
    main, start, predict, ce, loss = _program()
    test = main.clone(for_test=True)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start, scope=scope)
    got, = exe.run(test, feed={"x": X, "label": LABEL}, fetch_list=[loss], scope=scope)
    probs = np.asarray(exe.run(test, feed={"x": X, "label": LABEL}, fetch_list=[predict], scope=scope)[0])
    want = -np.log(probs[np.arange(12), LABEL.ravel()]).mean()
    np.testing.assert_allclose(np.asarray(got).ravel()[0], want, rtol=1e-6)
