"""Whole training steps against Paddle 1.8.5's recorded numbers (tests/data/paddle18/make_train_step.py; the
cases are in train_step_cases.py): conv + batch_norm residual blocks with Momentum (constant, piecewise-decayed
with L2 decay, Nesterov), an MLP with SGD (constant and exponentially decayed learning rate), batch_norm over
NHWC and over one value per channel. They cover what the lowering does for speed: optimizer runs grouped into
one update (fusion_optim.py), fc's mul + bias add as one addmm (fusion_fc.py), batch_norm's single native kernel
with Paddle's biased running variance, softmax and cross_entropy as one autograd node each, and the activations
let go before the backward (an intermediate is fetched on the last step, so it must survive)."""

import json
import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.backends.lowering.kernels import fused_ops

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
import train_step_cases as C  # noqa: E402

with open(os.path.join(DATA, "train_step.json")) as _fh:
    REF = json.load(_fh)


def train(build, make_opt, feed):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss, inter = build(fluid)
        make_opt().minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    rec = {"loss": []}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for step in range(C.STEPS):
            last = step == C.STEPS - 1
            out = exe.run(main, feed=feed, fetch_list=[loss, inter] if last else [loss])
            rec["loss"].append(float(np.array(out[0]).ravel()[0]))
        rec["inter"] = np.array(out[1])
        rec["state"] = {v.name: np.array(scope.find_var(v.name).get_tensor()) for v in main.list_vars()
                        if v.persistable and v.name not in ("feed", "fetch")}
    return rec, [p.lowered for p in exe._cache.values() if p.lowered.block.program is main]


def _check(got, ref, name):
    np.testing.assert_allclose(got["loss"], ref["loss"], rtol=1e-4, atol=1e-7, err_msg=name + " losses")
    np.testing.assert_allclose(got["inter"], np.array(ref["inter"]), rtol=1e-4, atol=1e-6,
                               err_msg=name + " fetched intermediate")
    assert set(ref["state"]) <= set(got["state"]), sorted(set(ref["state"]) - set(got["state"]))
    for n, want in ref["state"].items():
        np.testing.assert_allclose(got["state"][n], np.array(want), rtol=1e-4, atol=1e-6,
                                   err_msg="%s %s" % (name, n))


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(REF))
def test_matches_paddle18(name):
    build, make_opt = C.cases(fluid)[name]
    got, lowered = train(build, make_opt, C.feeds(name))
    _check(got, REF[name], name)
    fused = [op.attrs["fused_from"] for lb in lowered for op, _ in lb.line_ops.values() if "fused_from" in op.attrs]
    groups = [f for f in fused if f.endswith(("momentum", "sgd"))]
    if name in GROUPED:
        # every step's lowering (with and without the extra fetch) updates all parameters in one group
        assert groups == [GROUPED[name]] * len(lowered), groups
        assert all("del v" in lb.src for lb in lowered)
    else:
        assert groups == [], groups
    # fc layers become one addmm each: the MLP's two, the resnet's one (over the flattened 4-D pool)
    fcs = 2 if name.startswith("mlp") else 1 if name.startswith("resnet") else 0
    assert fused.count("mul + elementwise_add") == fcs * len(lowered), fused


# the optimizer runs that become one grouped update
GROUPED = {"resnet_momentum": "20 momentum", "resnet_momentum_piecewise_l2": "20 momentum", "mlp_sgd": "4 sgd",
           "mlp_sgd_exp_decay": "4 sgd", "bn_nhwc_sgd": "2 sgd", "bn_single_value_sgd": "2 sgd"}


@pytest.mark.parity
@pytest.mark.parametrize("name", ["resnet_momentum", "resnet_momentum_piecewise_l2", "mlp_sgd"])
def test_foreach_path_matches_paddle18(name, monkeypatch):
    # the multi-tensor (_foreach_*) path the GPU takes, run on the CPU: same numbers
    monkeypatch.setattr(fused_ops, "use_foreach", lambda t: True)
    build, make_opt = C.cases(fluid)[name]
    got, _ = train(build, make_opt, C.feeds(name))
    _check(got, REF[name], name)
