"""RecomputeOptimizer / append_backward(checkpoints=...): the programs against Paddle 1.8.5's recorded ones
(tests/data/paddle18/make_recompute.py; models in recompute_cases.py), and training with recomputation against
training without it (the same losses and parameters, dropout included)."""

import json
import os
import sys

import numpy as np
import pytest

import paddle_compat as fluid

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
import recompute_cases as C  # noqa: E402

with open(os.path.join(DATA, "recompute.json")) as _fh:
    REF = json.load(_fh)


def _program(case, recompute=True):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = C.build(fluid, case, recompute)
    return main, startup, loss


def _slots(d):
    return {s: list(ns) for s, ns in d.items() if ns}


@pytest.mark.parametrize("case", sorted(C.CASES))
def test_program_matches_paddle18(case):
    main, _, _ = _program(case)
    ops = main.global_block().ops
    assert [op.type for op in ops] == [o[0] for o in REF[case]]
    for op, (typ, ins, outs) in zip(ops, REF[case]):
        if typ.endswith("_grad"):
            # our grad ops list every forward input and output (autograd computes them, see backward.py),
            # Paddle's only what each grad kernel reads: Paddle's must be among ours, renamed alike
            ours = _slots(op.inputs)
            for slot, names in ins.items():
                assert ours.get(slot) == names, (case, typ, slot, ours.get(slot), names)
            assert _slots(op.outputs) == outs, (case, typ)
        else:
            assert (_slots(op.inputs), _slots(op.outputs)) == (ins, outs), (case, typ)


def _train(case, recompute, steps=4, fetch_extra=()):
    main, startup, loss = _program(case, recompute)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    losses, extra = [], []
    with fluid.scope_guard(scope):
        exe.run(startup)
        for _ in range(steps):
            out = exe.run(main, feed={"x": C.X, "y": C.Y}, fetch_list=[loss] + list(fetch_extra))
            losses.append(float(np.array(out[0]).ravel()[0]))
            extra.append([np.array(v) for v in out[1:]])
        params = {p.name: np.array(scope.find_var(p.name).get_tensor())
                  for p in main.global_block().all_parameters()}
    return losses, params, extra


@pytest.mark.parametrize("case", ["mlp_out_of_order", "mlp_no_dropout"])
def test_recompute_trains_like_plain_backward(case):
    """Seeded dropouts: with and without recomputation the masks, losses and updates are the same."""
    l1, p1, _ = _train(case, True)
    l0, p0, _ = _train(case, False)
    np.testing.assert_array_equal(l1, l0)
    assert l1[-1] < l1[0]
    for n in p0:
        np.testing.assert_array_equal(p1[n], p0[n], err_msg=n)


@pytest.mark.parametrize("case", ["mlp_two_checkpoints", "mlp_one_checkpoint"])
def test_recomputed_values_equal_forward_ones(case):
    """Unseeded dropouts too: the recomputed masks and activations are the forward ones, every step."""
    main, _, _ = _program(case)
    pairs = [(n[: -len(".subprog_0")], n) for n in main.global_block().vars if n.endswith(".subprog_0")]
    assert any(n.startswith("drop") for n, _ in pairs), pairs
    losses, _, extra = _train(case, True, fetch_extra=[n for pair in pairs for n in pair])
    assert np.isfinite(losses).all()
    for step in extra:
        for k in range(0, len(step), 2):
            np.testing.assert_array_equal(step[k], step[k + 1], err_msg=pairs[k // 2][1])
    masks = [step[[n for pair in pairs for n in pair].index("drop1.tmp_1")] for step in extra]
    assert not all((m == masks[0]).all() for m in masks[1:])     # unseeded: a fresh mask each step


def test_checkpoints_variables_only_and_required():
    opt = fluid.optimizer.RecomputeOptimizer(fluid.optimizer.SGD(0.1))
    with pytest.raises(TypeError, match="checkpoints"):
        opt._set_checkpoints("h1")
    with pytest.raises(TypeError, match=r"checkpoints\[0\]"):
        opt._set_checkpoints([1])
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        loss = C.net(fluid, None)["loss"]
        with pytest.raises(ValueError, match="_set_checkpoints"):
            opt.minimize(loss)


def test_no_usable_checkpoint_is_plain_backward():
    """An empty list, or checkpoints that split nothing, give plain backward's ops (and no seed ops)."""
    def types(checkpoints):
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup), fluid.unique_name.guard():
            v = C.net(fluid, None)
            if checkpoints is None:
                fluid.optimizer.SGD(0.1).minimize(v["loss"])
            else:
                opt = fluid.optimizer.RecomputeOptimizer(fluid.optimizer.SGD(0.1))
                opt._set_checkpoints([v[n] for n in checkpoints])
                opt.minimize(v["loss"])
        return [op.type for op in main.global_block().ops]
    plain = types(None)
    assert types([]) == plain
    assert types(["x"]) == plain


def test_shared_weight_across_segments():
    """A parameter used in two segments gets its gradient parts summed (Paddle's @RENAME@ parts), in the one
    autograd call the backward section still is: the same training as without recomputation."""
    from paddle_compat.backends.lowering.autograd_region import find_regions

    def run(recompute):
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup), fluid.unique_name.guard():
            x = fluid.layers.data("x", shape=[4], dtype="float32")
            y = fluid.layers.data("y", shape=[1], dtype="float32")
            shared = fluid.ParamAttr("ws", initializer=fluid.initializer.Uniform(-0.5, 0.5, seed=3))
            h1 = fluid.layers.fc(x, 4, act="tanh", param_attr=shared, bias_attr=False)
            h2 = fluid.layers.fc(h1, 4, act="tanh", param_attr=shared, bias_attr=False)
            h3 = fluid.layers.fc(h2, 4, act="tanh", param_attr=shared, bias_attr=False)
            out = fluid.ParamAttr("wo", initializer=fluid.initializer.Constant(0.3))
            loss = fluid.layers.mean(fluid.layers.square(fluid.layers.fc(h3, 1, param_attr=out, bias_attr=False) - y))
            opt = fluid.optimizer.SGD(0.5)
            if recompute:
                opt = fluid.optimizer.RecomputeOptimizer(opt)
                opt._set_checkpoints([h1, h2])
            opt.minimize(loss)
        if recompute:
            assert any(op.type == "sum" for op in main.global_block().ops)
            assert any(n.endswith(".subprog_0") for n in main.global_block().vars)
            assert len(find_regions(main.global_block())) == 1
        exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
        with fluid.scope_guard(scope):
            exe.run(startup)
            losses = [exe.run(main, feed={"x": C.X, "y": C.Y}, fetch_list=[loss])[0] for _ in range(3)]
            return losses, np.array(scope.find_var("ws").get_tensor())
    (l1, w1), (l0, w0) = run(True), run(False)
    np.testing.assert_array_equal(l1, l0)
    np.testing.assert_array_equal(w1, w0)


def test_data_parallel_recompute_trains_like_plain(monkeypatch):
    """Two places in one process: the averaged gradients are the same with recomputation."""
    monkeypatch.setenv("CPU_NUM", "2")

    def run(recompute):
        main, startup, loss = _program("mlp_no_dropout", recompute)
        prog = fluid.CompiledProgram(main).with_data_parallel(loss_name=loss.name)
        exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
        with fluid.scope_guard(scope):
            exe.run(startup)
            losses = [exe.run(prog, feed={"x": C.X, "y": C.Y}, fetch_list=[loss])[0] for _ in range(3)]
            return losses, {n: np.array(scope.find_var(n).get_tensor()) for n in ("w1", "b2", "w4")}
    (l1, p1), (l0, p0) = run(True), run(False)
    np.testing.assert_array_equal(l1, l0)
    for n in p0:
        np.testing.assert_array_equal(p1[n], p0[n], err_msg=n)


def test_copies_run_only_when_fetched():
    from paddle_compat.backends.lowering.codegen import lower_block
    from paddle_compat.ir.roles import is_recomputed_op
    main, startup, loss = _program("mlp_two_checkpoints")
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        fluid.Executor(fluid.CPUPlace()).run(startup)

    def lowered_copies(fetch):
        low = lower_block(main, 0, scope, "cpu", feed_names=["x", "y"], fetch_names=fetch)
        return sorted(op.output_arg_names[0] for op, _ in low.line_ops.values() if is_recomputed_op(op))
    assert sum(is_recomputed_op(op) for op in main.global_block().ops) == 5
    assert lowered_copies([loss.name]) == []
    # a fetched copy runs, with the copies it reads
    assert lowered_copies([loss.name, "fc_1.tmp_0.subprog_0"]) == ["drop1.tmp_0.subprog_0", "fc_1.tmp_0.subprog_0"]
