"""fluid.contrib.mixed_precision.decorate against Paddle 1.8.5 (tests/data/paddle18/make_amp.py, amp.json):
the rewritten programs op by op, and the dynamic loss-scaling decisions step by step."""

import json
import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.fluid.contrib import mixed_precision as mp

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
import make_amp as M  # noqa: E402

with open(os.path.join(DATA, "amp.json")) as _fh:
    REF = json.load(_fh)

# 1.8.5's Switch-built scaling update (from its zero-steps constant to the optimizer) and our fused op
_THEIR_SWITCH = ["fill_constant", "logical_not", "conditional_block", "conditional_block", "logical_not",
                 "conditional_block", "conditional_block"]
_OUR_UPDATE = ["logical_not", "update_loss_scaling"]


def _ours(main):
    ops = main.global_block().ops
    params = set(p.name for p in main.global_block().all_parameters())
    seq, param_casts = [], []
    for op in ops:
        if op.type == "cast_grad" and any(n[:-5] in params for n in op.output_arg_names if n.endswith("@GRAD")):
            param_casts.append(op.output_arg_names[0])      # 1.8.5 moves these to the end (see fp16_utils)
            continue
        seq.append((op.type, int(op.attrs.get("op_role", 0))))
    return seq, sorted(param_casts)


def _theirs(name):
    ops = REF["programs"][name]["blocks"][0]["ops"]
    seq, param_casts = [], []
    for op in ops:
        t, role = op["type"], op["role"]
        if t == "cast" and role == 2:
            param_casts.append(op["outputs"]["Out"][0])
            continue
        if t == "cast" and role & 1:
            t = "cast_grad"     # Paddle's grad op of cast is a cast; ours is named <type>_grad
        seq.append((t, role))
    types = [t for t, _ in seq]
    i = types.index("isfinite") + 1
    j = i + len(_THEIR_SWITCH)
    assert types[i:j] == _THEIR_SWITCH
    seq[i:j] = [(t, 0) for t in _OUR_UPDATE]
    return seq, sorted(param_casts)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(M.PROGRAMS))
def test_rewritten_program_matches_paddle18(name):
    main = M.build_program(fluid, mp, name)[0]
    seq, casts = _ours(main)
    want_seq, want_casts = _theirs(name)
    assert seq == want_seq
    assert casts == want_casts
    # block 0 only: no Switch sub-blocks (13 blocks in 1.8.5)
    assert len(main.blocks) == 1 and len(REF["programs"][name]["blocks"]) == 13


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(M.PROGRAMS))
def test_forward_casts_and_dtypes_match_paddle18(name):
    main = M.build_program(fluid, mp, name)[0]
    ref_ops = REF["programs"][name]["blocks"][0]["ops"]
    n_fwd = next(i for i, op in enumerate(ref_ops) if op["role"] != 0)     # up to loss * loss_scaling
    ops = main.global_block().ops
    for op, want in zip(ops[:n_fwd], ref_ops[:n_fwd]):
        got_in = {k: v for k, v in op.inputs.items() if v}
        got_out = {k: v for k, v in op.outputs.items() if v}
        want_in = {k: v for k, v in want["inputs"].items() if v}
        want_out = {k: v for k, v in want["outputs"].items() if v}
        assert (want["type"], want_in) == (op.type, {k: got_in.get(k) for k in want_in})
        assert want_out == {k: got_out.get(k) for k in want_out}, op.type
    ref_dtypes = REF["programs"][name]["dtypes"]
    ours = {n: v.dtype.name for n, v in main.global_block().vars.items()}
    low = sorted(n for n, d in ref_dtypes.items() if d == "FP16" and "@GRAD" not in n)
    assert low and [n for n in low if ours.get(n) != "FP16"] == []
    assert sorted(n for n, d in ours.items() if d == "FP16" and "@GRAD" not in n) == low
    # the master weights stay float32
    for p in main.global_block().all_parameters():
        assert ours[p.name] == "FP32" == ref_dtypes[p.name]


def _train(name):
    main, startup, loss, opt = M.build_run(fluid, mp, name)
    fetch = [loss, opt.get_scaled_loss(), opt.get_loss_scaling()]
    dynamic = M.RUNS[name][0].get("use_dynamic_loss_scaling", True)
    if dynamic:
        fetch += [opt._num_good_steps, opt._num_bad_steps]
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    rec = {k: [] for k in ("loss", "scaled_loss", "loss_scaling", "good", "bad", "params")}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for kind in M.FEEDS[:M.STEPS]:
            res = exe.run(main, feed=M.feed(kind), fetch_list=fetch)
            vals = [np.array(r).ravel()[0] for r in res]
            for k, v in zip(("loss", "scaled_loss", "loss_scaling", "good", "bad"), vals):
                rec[k].append(v)
            rec["params"].append({p: np.array(scope.find_var(p).get_tensor()) for p in M.PARAMS})
    return rec


def _moved(params, init):
    prev = [{p: getattr(M, p.upper()) for p in M.PARAMS}] + params[:-1]
    return [any(not np.array_equal(np.asarray(a[p]), np.asarray(b[p]), equal_nan=True) for p in M.PARAMS)
            for a, b in zip(params, prev)]


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(M.RUNS))
def test_loss_scaling_decisions_match_paddle18(name):
    got, ref = _train(name), REF["runs"][name]
    # the scaling after each step, bit for bit (float32), and the counters
    np.testing.assert_array_equal(np.float32(got["loss_scaling"]), np.float32(ref["loss_scaling"]))
    assert [int(v) for v in got["good"]] == ref["good"]
    assert [int(v) for v in got["bad"]] == ref["bad"]
    # which steps changed the parameters (SGD: none of the bad ones; Momentum: its velocity moves them)
    assert _moved(got["params"], None) == _moved(ref["params"], None)
    np.testing.assert_allclose(np.float32(got["loss"]), np.float32(ref["loss"]), rtol=1e-4, equal_nan=True)
    np.testing.assert_allclose(np.float32(got["scaled_loss"]), np.float32(ref["scaled_loss"]), rtol=1e-4,
                               equal_nan=True)
    for k, (a, b) in enumerate(zip(got["params"], ref["params"])):
        for p in M.PARAMS:
            np.testing.assert_allclose(a[p], np.array(b[p], dtype="float32"), rtol=1e-4, atol=1e-6,
                                       equal_nan=True, err_msg="%s step %d %s" % (name, k, p))


def test_recorded_runs_cover_the_state_machine():
    runs = REF["runs"]
    saw = runs["sawtooth_sgd"]["loss_scaling"]
    assert saw[0] == 2.0 ** 126 and min(saw) < 2.0 ** 124 and saw[-1] > min(saw)     # shrinks and grows
    assert min(runs["floor_at_one"]["loss_scaling"]) == 1.0
    assert len(set(runs["incr_overflow"]["loss_scaling"][:19])) == 1         # growth to inf not applied
    assert any(_moved(runs["sawtooth_momentum"]["params"], None)[i] for i, f in enumerate(M.FEEDS) if f != "ok")
    assert not any(_moved(runs["sawtooth_sgd"]["params"], None)[i] for i, f in enumerate(M.FEEDS) if f != "ok")
    assert not REF["fp16_cpu"]["ran"] and "float16" in REF["fp16_cpu"]["error"]


def test_backward_and_minimize_return_what_paddle18_returns():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = M.build_regression(fluid)
        opt = mp.decorate(fluid.optimizer.SGD(0.1))
        assert float(np.float32(2 ** 15)) == 32768.0
        ops, pgs = opt.minimize(loss)
    assert [p.name for p, _ in pgs] == ["w1", "b1", "w2", "b2"]
    divs = {op.output_arg_names[0]: op for op in main.global_block().ops if op.type == "elementwise_div"}
    for p, g in pgs:        # each returned gradient is <param>@GRAD / loss_scaling
        assert divs[g.name].input("X") == [p.name + "@GRAD"]
        assert divs[g.name].input("Y") == [opt.get_loss_scaling().name]
    assert [op.type for op in ops] == ["sgd"] * 4
    assert opt.get_scaled_loss().name != loss.name
    # the default initial scaling is 1.8.5's 2**15
    init = [op for op in startup.global_block().ops if opt.get_loss_scaling().name in op.output_arg_names]
    assert init and init[0].attr("value") == 32768.0
