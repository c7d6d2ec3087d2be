"""The fused loss-scaling check of contrib.mixed_precision (backends/lowering/fusion_amp.py, kernels/fused_ops.py)
decides as the unfused ops (per-gradient Paddle-order sums, concat, sum, isfinite) decide, including gradients
that are finite but whose sums overflow, and a decorated program trains to the same bits with and without it.
(Paddle 1.8.5's own decisions: test_amp_paddle18.py, which runs through the fused op.)"""

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.backends.lowering import fusion_amp
from paddle_compat.backends.lowering.kernels import fused_ops as amp_fused

BIG = 3.0e38


@pytest.mark.parametrize("case", ["normal", "inf", "nan", "overflowing_sum", "cancelling_huge", "one_huge"])
def test_verdict_is_the_sums_verdict(case):
    rng = np.random.RandomState(0)
    qs = [torch.from_numpy(rng.randn(*s).astype(np.float32)) for s in ((5, 3), (3,), (17, 9), (1,))]
    if case == "inf":
        qs[2][4, 1] = float("inf")
    elif case == "nan":
        qs[1][0] = float("nan")
    elif case == "overflowing_sum":         # every element finite, their sum is not
        qs[2].fill_(BIG / 10)
    elif case == "cancelling_huge":         # past the bound, but the sums cancel: finite
        qs[0][0, 0], qs[0][0, 1] = BIG, -BIG
    elif case == "one_huge":
        qs[3][0] = BIG
    want = bool(amp_fused._found_by_sums(qs))
    assert amp_fused._found_cpu(qs) == want
    assert want == (case in ("inf", "nan", "overflowing_sum"))


@pytest.mark.parametrize("case", ["normal", "inf", "nan", "overflowing_sum", "cancelling_huge", "one_huge"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_the_device_check_gives_the_same_quotients_and_decides_on_non_finite_ones(case, dtype):
    # the device path (_check_on_device: no host read) run on CPU tensors: true divisions, a bad step's
    # quotients zeroed, and "some quotient is not finite" (it differs from the sums only where finite
    # quotients' sum overflows float32)
    rng = np.random.RandomState(1)
    big = 6.0e4 if dtype == torch.float16 else BIG
    gs = [torch.from_numpy(rng.randn(*s).astype(np.float32)).to(dtype) for s in ((5, 3), (3,), (17, 9), (1,))]
    if case == "inf":
        gs[2][4, 1] = float("inf")
    elif case == "nan":
        gs[1][0] = float("nan")
    elif case == "overflowing_sum":
        gs[2].fill_(big / 10)
    elif case == "cancelling_huge":
        gs[0][0, 0], gs[0][0, 1] = big, -big
    elif case == "one_huge":
        gs[3][0] = big
    scale = torch.tensor([1.5], dtype=dtype)
    quots, found = amp_fused._check_on_device([g.clone() for g in gs], scale)
    bad = case in ("inf", "nan")
    assert found.shape == (1,) and bool(found) == bad
    for q, g in zip(quots, gs):
        want = torch.zeros_like(g) if bad else g / scale
        assert q.dtype == g.dtype and torch.equal(q, want)


def _train(monkeypatch, fused, feeds, fetch_flag=False):
    if not fused:
        monkeypatch.setattr(fusion_amp, "plan", lambda *a, **k: {})
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 3
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        h = fluid.layers.fc(x, size=5, act="relu")
        loss = fluid.layers.mean(fluid.layers.fc(h, size=1))
        opt = fluid.contrib.mixed_precision.decorate(fluid.optimizer.Momentum(0.01, 0.9), init_loss_scaling=2.0 ** 20,
                                                     decr_every_n_nan_or_inf=1, incr_every_n_steps=2)
        opt.minimize(loss)
    flag = [op for op in main.global_block().ops if op.type == "isfinite"][0].output("Out")[0]
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start, scope=scope)
    fetch = [loss, opt.get_loss_scaling()] + ([flag] if fetch_flag else [])
    out = []
    for f in feeds:
        res = exe.run(main, feed={"x": f}, fetch_list=fetch, scope=scope)
        params = [np.array(scope.find_var(p.name).get_tensor()) for p in main.global_block().all_parameters()]
        out.append((res, params))
    lowered = [p.lowered.code for p in exe._cache.values() if p.feed_specs]
    return out, lowered


def test_fused_and_unfused_programs_train_alike(monkeypatch):
    rng = np.random.RandomState(1)
    feeds = []
    for k in range(12):
        f = rng.uniform(-1, 1, (6, 4)).astype(np.float32)
        if k in (3, 7):
            f[0, 0] = np.inf                # a bad step: the scaling shrinks, the gradients are zeroed
        if k == 9:
            f *= np.float32(1e30)           # huge gradients: their scaled sums overflow
        feeds.append(f)
    with monkeypatch.context() as m:
        want, code_plain = _train(m, False, feeds)
    with monkeypatch.context() as m:
        got, code_fused = _train(m, True, feeds)
    assert "fused_amp_unscale_check_update" in code_fused[0]
    assert "fused_amp_unscale_check_update" not in code_plain[0]
    scalings = [float(np.array(r[1]).ravel()[0]) for r, _ in want]
    assert len(set(scalings)) > 2                          # the scaling moved both ways
    for (rw, pw), (rg, pg) in zip(want, got):
        for a, b in zip(rw, rg):
            np.testing.assert_array_equal(np.array(a), np.array(b))
        for a, b in zip(pw, pg):
            np.testing.assert_array_equal(a, b)


def test_a_fetched_intermediate_keeps_the_ops(monkeypatch):
    feeds = [np.ones((2, 4), np.float32)]
    _, code = _train(monkeypatch, True, feeds, fetch_flag=True)
    assert "fused_amp_unscale_check_update" not in code[0]
