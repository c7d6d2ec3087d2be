"""Optimizers trained a few steps on a small fixed model, against Paddle 1.8.5's recorded losses and
parameters (tests/data/paddle18/make_optimizers.py; model and data in optimizer_cases.py)."""

import json
import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
import optimizer_cases as C  # noqa: E402

with open(os.path.join(DATA, "optimizers.json")) as _fh:
    REF = json.load(_fh)
O = fluid.optimizer


def _params(scope):
    return {n: np.array(scope.find_var(n).get_tensor()) for n in C.PARAMS}


def train(make_opt, extra=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = C.build(fluid)
        opt = make_opt()
        if isinstance(opt, O.RecomputeOptimizer):
            opt._set_checkpoints([main.global_block().var("w1")])
        opt.minimize(loss)
        avg = extra() if extra else None
        if isinstance(avg, O.ExponentialMovingAverage):
            avg.update()
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    rec = {"loss": []}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for _ in range(C.STEPS):
            l, = exe.run(main, feed={"x": C.X, "y": C.Y}, fetch_list=[loss])
            rec["loss"].append(float(np.array(l).ravel()[0]))
        rec["params"] = _params(scope)
        if avg is not None:
            with avg.apply(exe):
                rec["applied"] = _params(scope)
            rec["restored"] = _params(scope)
    return rec, main


def _check(got, ref, name):
    np.testing.assert_allclose(got["loss"], ref["loss"], rtol=1e-4, atol=1e-7, err_msg=name + " losses")
    for key in ("params", "applied", "restored"):
        if key in ref:
            for p in C.PARAMS:
                np.testing.assert_allclose(got[key][p], np.array(ref[key][p]), rtol=1e-4, atol=1e-6,
                                           err_msg="%s %s %s" % (name, key, p))


WRAPPED = {
    "lookahead": (lambda: O.LookaheadOptimizer(O.SGD(0.1), alpha=0.5, k=2), None),
    "recompute_adam": (lambda: O.RecomputeOptimizer(O.Adam(0.05)), None),
    "ema": (lambda: O.SGD(0.1), lambda: O.ExponentialMovingAverage(0.9)),
    "ema_thres_steps": (lambda: O.SGD(0.1), lambda: O.ExponentialMovingAverage(
        0.9, thres_steps=fluid.layers.autoincreased_step_counter(counter_name="@THRES_STEP@"))),
    "ema_float_thres_steps": (lambda: O.SGD(0.1), lambda: O.ExponentialMovingAverage(
        0.9, thres_steps=fluid.layers.cast(fluid.layers.autoincreased_step_counter(counter_name="@THRES_STEP@"),
                                           "float32"))),
    "model_average": (lambda: O.SGD(0.1), lambda: O.ModelAverage(0.5, min_average_window=2, max_average_window=3)),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(C.optimizers(fluid)))
def test_optimizer_matches_paddle18(name):
    got, main = train(C.optimizers(fluid)[name])
    _check(got, REF[name], name)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(WRAPPED))
def test_wrapper_matches_paddle18(name):
    got, _ = train(*WRAPPED[name])
    _check(got, REF[name], name)


def test_optimizers_append_paddles_op_types_and_state():
    # the op types, slots and accumulators the pserver transpiler reads to place optimizer state
    expect = {"ftrl": ("ftrl", {"SquaredAccumulator", "LinearAccumulator"}),
              "decayed_adagrad": ("decayed_adagrad", {"Moment"}),
              "adadelta": ("adadelta", {"AvgSquaredGrad", "AvgSquaredUpdate"}),
              "lamb": ("lamb", {"Moment1", "Moment2", "Beta1Pow", "Beta2Pow"}),
              "lars_momentum": ("lars_momentum", {"Velocity"}),
              "dpsgd": ("dpsgd", set())}
    for name, (op_type, state) in expect.items():
        _, main = train(C.optimizers(fluid)[name])
        ops = [op for op in main.global_block().ops if op.type == op_type]
        assert len(ops) == 4, (name, [op.type for op in main.global_block().ops])
        for op in ops:
            assert set(op.input_names) >= {"Param", "Grad"} | state, (name, op.input_names)
            for slot in state:
                assert main.global_block().var(op.input(slot)[0]).persistable, (name, slot)
            assert op.output("ParamOut") == op.input("Param")


def test_dgc_momentum_is_momentum():
    ref, _ = train(lambda: O.Momentum(0.1, 0.9))
    got, main = train(lambda: O.DGCMomentumOptimizer(0.1, 0.9, rampup_begin_step=0))
    assert {op.type for op in main.global_block().ops} >= {"momentum"}
    np.testing.assert_array_equal(got["loss"], ref["loss"])
    with pytest.raises(ValueError, match="rampup_begin_step"):
        O.DGCMomentumOptimizer(0.1, 0.9, rampup_begin_step=-1)


def test_pserver_transpiler_places_ftrl_state():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = C.build(fluid)
        O.Ftrl(0.1, l1=0.01).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=startup, pservers="127.0.0.1:6170,127.0.0.1:6171", trainers=2)
    placed = []
    for ep in ("127.0.0.1:6170", "127.0.0.1:6171"):
        prog = t.get_pserver_program(ep)
        for blk in prog.blocks:
            placed += [op for op in blk.ops if op.type == "ftrl"]
    assert len(placed) == 4
    for op in placed:
        assert op.input("SquaredAccumulator") and op.input("LinearAccumulator")
