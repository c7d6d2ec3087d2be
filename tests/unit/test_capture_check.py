"""Which blocks a whole-step CUDA graph can run (backends/lowering/capture_check.py), decided on the CPU from the
plan: static shapes and no host work. The families' verdicts, each reason on a small program, and a probe that
the steps judged safe really make no host round trip (no .item(), .tolist(), bool(tensor), nonzero, ...) when
run op by op."""

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.ops.defs import control_flow
from paddle_compat.backends.lowering import interpreter
from paddle_compat.backends.lowering.capture_check import op_reason
from paddle_compat.backends.lowering.plan import plan_block

import lowering_families as F
from test_lowering_differential import as_feeds, startup_scope


@pytest.fixture(autouse=True)
def predicate_on_cpu(monkeypatch):
    # the predicated Switch cases a device runs, run here on the CPU (where the host decides by default)
    monkeypatch.setattr(control_flow, "PREDICATE_ON_CPU", True)


L = fluid.layers

# conv_bn (piecewise_decay), opt_adagrad_warmup (linear_lr_warmup) and switch_lr set their learning rate in
# a Switch: its small conditional_blocks run predicated, on the device
UNSAFE = {"lstm_lod": "LoD", "ctr_sparse": "LoD", "while_cond": "tensor array"}
SAFE = set(F.FAMILIES) - set(UNSAFE)


def family_plan(name):
    main, startup, loss, feeds = F.build(name)
    scope = startup_scope(startup)
    names, values, with_lod = as_feeds(main.global_block(), feeds[0])
    return main, scope, loss, names, values, with_lod, plan_block(main, 0, scope, names, [loss.name], with_lod)


@pytest.mark.parametrize("name", sorted(F.FAMILIES))
def test_family_verdicts(name):
    verdict = family_plan(name)[-1].capture
    assert set(SAFE) | set(UNSAFE) == set(F.FAMILIES)
    if name in SAFE:
        assert verdict.safe and verdict.reason is None and bool(verdict)
    else:
        assert not verdict.safe and UNSAFE[name] in verdict.reason, verdict.reason


def verdict_of(build, fetch=None, check_nan_inf=False, feed_lod=()):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        out, feeds = build()
    scope = startup_scope(startup)
    return plan_block(main, 0, scope, feeds, [out.name], feed_lod, check_nan_inf=check_nan_inf).capture


def _x():
    return L.data("x", [4], dtype="float32")


def test_reasons_name_the_op_or_variable():
    assert verdict_of(lambda: (L.fc(_x(), 3), ["x"])).safe
    v = verdict_of(lambda: (L.fc(_x(), 3), ["x"]), check_nan_inf=True)
    assert not v.safe and "FLAGS_check_nan_inf" in v.reason

    def printed():
        x = _x()
        return L.Print(L.fc(x, 3)), ["x"]
    v = verdict_of(printed)
    assert "op 'print'" in v.reason and "prints" in v.reason and v.op_index is not None

    def py_func():
        x = _x()
        out = fluid.default_main_program().global_block().create_var(name="pyout", shape=[-1, 4], dtype="float32")
        L.py_func(lambda a: a, x, out)
        return out, ["x"]
    assert "runs Python code" in verdict_of(py_func).reason

    def shape_tensor():
        x = _x()
        return L.reshape(x, shape=[-1, 4], actual_shape=L.fill_constant([2], "int32", 2)), ["x"]
    assert "on the host" in verdict_of(shape_tensor).reason

    def seeded_dropout():
        return L.dropout(_x(), 0.5, seed=7), ["x"]
    assert "fixed seed" in verdict_of(seeded_dropout).reason
    assert verdict_of(lambda: (L.dropout(_x(), 0.5), ["x"])).safe

    def uniq():
        ids = L.data("ids", [1], dtype="int64")
        return L.unique(L.reshape(ids, [-1]))[0], ["ids"]
    assert "depends on the data" in verdict_of(uniq).reason

    def lod_input():
        ids = L.data("ids", [1], dtype="int64", lod_level=1)
        return L.sequence_pool(L.embedding(ids, [10, 3]), "sum"), ["ids"]
    assert "'ids' carries a LoD" in verdict_of(lod_input, feed_lod={"ids"}).reason


def test_a_sparse_lookup_is_safe_for_inference_and_not_for_training():
    def lookup(train):
        def build():
            ids = L.data("ids", [1], dtype="int64")
            out = L.reduce_sum(L.embedding(ids, [10, 3], is_sparse=True))
            if train:
                fluid.optimizer.SGD(0.1).minimize(out)
            return out, ["ids"]
        return build
    assert verdict_of(lookup(False)).safe
    v = verdict_of(lookup(True))
    assert "row-sparse gradient" in v.reason and "lookup_table" in v.reason


def test_op_reason_of_control_flow_and_rpc():
    prog = fluid.Program()
    block = prog.global_block()
    for t, why in [("while", "control flow"), ("send", "RPC"), ("c_allreduce_sum", "process-group"),
                   ("read", "reader"), ("save", "files"), ("write_to_array", "tensor array")]:
        op = fluid.framework.Operator(block, t, inputs={}, outputs={}, attrs={})
        assert why in op_reason(op), (t, op_reason(op))
    assert op_reason(fluid.framework.Operator(block, "relu", inputs={"X": ["a"]}, outputs={"Out": ["b"]})) is None


# (not .numpy(): the CPU kernels take Eigen-order sums through numpy, a path that only exists on the CPU; on a
# CUDA tensor .numpy() fails outright, which the GPU sweep would show)
_SYNCS = ("item", "tolist", "__bool__", "__int__", "__float__", "__index__", "cpu", "nonzero")


def host_reads(name, monkeypatch):
    """Run the family's step twice op by op, recording every host read of a tensor as (op type, method)."""
    main, scope, loss, names, values, with_lod, plan = family_plan(name)
    interp = interpreter.interpret_block(main, 0, scope, "cpu", names, [loss.name], feed_lod=with_lod)
    seen, current = [], [None]
    run_op = interpreter._Run.op

    def op(self, i, op, spec, kernel):
        current[0] = op.type
        try:
            return run_op(self, i, op, spec, kernel)
        finally:
            current[0] = None

    def probe(meth, orig):
        def wrapped(*a, **k):
            seen.append((current[0] or "autograd", meth))
            return orig(*a, **k)
        return wrapped
    monkeypatch.setattr(interpreter._Run, "op", op)
    for meth in _SYNCS:
        monkeypatch.setattr(torch.Tensor, meth, probe(meth, getattr(torch.Tensor, meth)))
    monkeypatch.setattr(torch, "nonzero", probe("nonzero", torch.nonzero))
    monkeypatch.setattr(torch, "unique", probe("unique", torch.unique))
    try:
        for _ in range(2):
            out = interp(values)
    finally:
        monkeypatch.undo()
    assert np.isfinite(out[0][0].detach().numpy()).all()
    return plan, seen


@pytest.mark.parametrize("name", sorted(SAFE))
def test_safe_steps_make_no_host_round_trip(name, monkeypatch):
    # a step the analysis calls safe has none of what a CUDA graph could not capture
    plan, seen = host_reads(name, monkeypatch)
    assert plan.capture.safe
    assert seen == [], seen


def test_the_probe_sees_the_host_reads_of_a_while_loop(monkeypatch):
    plan, seen = host_reads("while_cond", monkeypatch)
    assert not plan.capture.safe
    assert ("while", "__bool__") in seen or any(t == "while" for t, _ in seen), seen
