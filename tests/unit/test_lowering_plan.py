"""The lowering's plan (backends/lowering/plan.py) as data, each decision on its own; the closed LowerCtx with
declared per-block state; the generated code as `.code` and PADDLE_COMPAT_DEBUG_LOWERING."""

import dataclasses
import os

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.backends.lowering import debug, plan as P, registry
from paddle_compat.backends.lowering.codegen import LowerCtx, LoweringError, lower_block
from paddle_compat.backends.lowering.plan_types import FreeStep, OpStep, Ref, RegionStep

import lowering_families as F
from test_lowering_differential import as_feeds, startup_scope

L = fluid.layers


def mlp_plan(**kw):
    main, startup, loss, feeds = F.build("mlp")
    scope = startup_scope(startup)
    names, values, _ = as_feeds(main.global_block(), feeds[0])
    return main, scope, loss, names, values, P.plan_block(main, 0, scope, names, [loss.name], **kw)


def test_the_plan_of_a_training_step():
    main, scope, loss, names, _, plan = mlp_plan()
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.writes = ()
    kinds = [type(s).__name__ for s in plan.steps]
    assert kinds.count("RegionStep") == 1 and kinds.index("FreeStep") == kinds.index("RegionStep") - 1
    region = [s for s in plan.steps if isinstance(s, RegionStep)][0]
    params = sorted(p.name for p in main.global_block().all_parameters())
    assert region.last and not region.retain_graph and region.targets == (loss.name,)
    assert sorted(region.inputs) == params and sorted(plan.grad_leaves) == params
    types = [s.op.type for s in plan.kernel_steps()]
    assert types.count("fused_mul_add_bias") == 3 and "mul" not in types      # each fc one addmm
    assert types.count("fused_sgd_group") == 1 and "sgd" not in types         # one grouped update
    assert set(params) <= set(plan.scope_reads) and set(params) <= set(plan.writes)
    assert plan.feeds == tuple(names) and plan.fetches == (loss.name,) and plan.grad_mode is True
    assert plan.capture.safe and "capture: yes" in plan.describe()
    unfused = P.plan_block(main, 0, scope, names, [loss.name], fuse=False)
    assert [s.op.type for s in unfused.kernel_steps()].count("mul") == 3 and unfused.fused == {}


def test_schedule_puts_each_region_at_its_first_grad_op_and_skips_what_does_not_run():
    main, scope, loss, names, _, plan = mlp_plan()
    block = main.global_block()
    sched = P.schedule(block, plan.regions, frozenset(i for r in plan.regions for i in r.op_idx), {})
    assert sched.count(plan.regions[0]) == 1
    at = sched.index(plan.regions[0])
    assert [i for i, _, _ in sched[:at]] == list(range(plan.regions[0].start))
    assert all(op is block.ops[i] and k is registry.get(op.type) for i, op, k in sched[at + 1:])


def test_a_missing_feed_is_named_before_any_kernel_is_built():
    main, scope, loss, names, _, _ = mlp_plan()
    with pytest.raises(LoweringError, match="data variable 'x' .* was not fed"):
        P.plan_block(main, 0, scope, ["y"], [loss.name])
    with pytest.raises(LoweringError, match="'fc_0.w_0' .*neither fed nor initialised.*startup program"):
        P.plan_block(main, 0, fluid.Scope(), names, [loss.name])      # a scope the startup never ran in


def test_detach_and_lod_decisions():
    x = L.data("x", [3], dtype="float32", lod_level=1)
    h = L.fc(x, 3)
    h.stop_gradient = True
    block = fluid.default_main_program().global_block()
    mul = [op for op in block.ops if op.type == "mul"][0]
    add = [op for op in block.ops if op.type == "elementwise_add"][0]
    kernel = registry.get("elementwise_add")
    assert P.detach_outputs(add, kernel, block, set()) == (h.name,)
    assert P.detach_outputs(mul, registry.get("mul"), block, set()) == ()
    assert P.detach_outputs(mul, registry.get("mul"), block, {mul.output("Out")[0]}) == (mul.output("Out")[0],)
    # fc's output keeps the LoD of its input (Paddle's ShareLoD) when the kernel computes none
    shares, gained = P.lod_after(mul, registry.get("mul"), block, "x")
    out = mul.output("Out")[0]
    if block.var(out).lod_level:
        assert shares == ((out, "x"),) and gained == [out]
    assert P.lod_after(mul, registry.get("mul"), block, None) == ((), [])


def test_frees_before_backward_keeps_what_is_read_later():
    k = registry.get("relu")
    a = OpStep(0, None, k, (Ref("x"),), (Ref("h1"),))
    b = OpStep(1, None, k, (Ref("h1"),), (Ref("h2"),))
    c = OpStep(2, None, k, (Ref("h2"),), (Ref("out"),), lod_shares=(("out", "x"),))
    region = RegionStep(3, None, ("out",), ("out@GRAD",), ("w",), ("w@GRAD",), False, True)
    after = OpStep(4, None, k, (Ref("h1"),), (Ref("z"),))
    steps = [a, b, c, region, after]
    assert P.frees_before_backward(steps, 3, keep=[]) == (Ref("h2"), Ref("out", True))
    assert P.frees_before_backward(steps, 3, keep=[Ref("h2")]) == (Ref("out", True),)
    assert P.step_refs(FreeStep((Ref("q"),))) == (set(), {Ref("q")})


def test_scope_writes_and_unread_recomputed():
    main, scope, loss, names, _, plan = mlp_plan()
    block = main.global_block()
    assert P.scope_writes(block, plan.regions, set()) == ()
    everything = set(n for op in block.ops for n in op.output_arg_names)
    persistable = [n for n in P.scope_writes(block, plan.regions, everything)]
    assert persistable and all(block._find_var_recursive(n).persistable for n in persistable)
    assert P.unread_recomputed(block, set(), [loss.name]) == set()     # no RecomputeOptimizer copies here


def test_lower_ctx_is_closed_and_holds_declared_state():
    prog = fluid.Program()
    ctx = LowerCtx(prog, prog.global_block(), None, "cpu")
    with pytest.raises(AttributeError, match="ctx.state"):
        ctx.table_ids = {}
    with pytest.raises(AttributeError):
        ctx.device = "cuda"

    class Shared:
        def __init__(self, c):
            self.ctx = c
    assert ctx.state(Shared) is ctx.state(Shared) and ctx.state(Shared).ctx is ctx
    other = LowerCtx(prog, prog.global_block(), None, "cpu")
    assert other.state(Shared) is not ctx.state(Shared)       # one per lowered block


def test_the_generated_code_is_reachable(tmp_path, monkeypatch, capsys):
    main, scope, loss, names, values, plan = mlp_plan()
    monkeypatch.delenv(debug.ENV, raising=False)
    lowered = lower_block(main, 0, scope, "cpu", names, [loss.name])
    assert lowered.code is lowered.src and lowered.plan.fetches == (loss.name,)
    assert "def __run(__feeds):" in lowered.code
    assert "# op 28 fused_sgd_group(Param=fc_0.b_0" in lowered.code and "[fused: 6 sgd]" in lowered.code
    assert "# feed x" in lowered.code and "# scope fc_0.w_0" in lowered.code
    assert capsys.readouterr().err == ""

    monkeypatch.setenv(debug.ENV, "1")
    lower_block(main, 0, scope, "cpu", names, [loss.name])
    err = capsys.readouterr().err
    assert "# ---- <paddle_compat block 0 of program" in err and "fused_mul_add_bias" in err

    monkeypatch.setenv(debug.ENV, str(tmp_path / "lowered"))
    again = lower_block(main, 0, scope, "cpu", names, [loss.name])
    files = os.listdir(str(tmp_path / "lowered"))
    assert len(files) == 1 and files[0].startswith("program%d_block0_" % main._uid)
    with open(str(tmp_path / "lowered" / files[0])) as f:
        assert again.code in f.read()
    monkeypatch.setenv(debug.ENV, "0")
    assert debug.target() is None


def test_names_cannot_break_out_of_a_comment():
    # a variable name from a loaded program file ends up in the generated code's comments only, and nothing
    # in it can end the comment's line
    prog = fluid.Program()
    block = prog.global_block()
    evil = "x\nraise SystemExit('ran')\n#"
    block.create_var(name=evil, shape=[2], dtype="float32")
    block.create_var(name="y", shape=[2], dtype="float32")
    block.append_op(type="relu", inputs={"X": [evil]}, outputs={"Out": ["y"]})
    lowered = lower_block(prog, 0, fluid.Scope(), "cpu", [evil], ["y"])
    assert "\nraise" not in lowered.code
    out = lowered([torch.tensor([-1.0, 2.0])])
    np.testing.assert_array_equal(out[0][0].numpy(), [0.0, 2.0])


def test_a_loss_seed_only_the_backward_reads_is_not_made():
    # append_backward's fill_constant of loss@GRAD: the region takes it as None (ones), so the code skips it
    main, scope, loss, names, values, plan = mlp_plan()
    seed = loss.name + "@GRAD"
    ops = main.global_block().ops
    fills = [i for i in plan.unit_fills if ops[i].output_arg_names == [seed]]
    assert len(fills) == 1 and ops[fills[0]].type == "fill_constant"
    lowered = lower_block(main, 0, scope, "cpu", names, [loss.name])
    assert "-> Out=%s" % seed not in lowered.code
    got = lowered(values)[0][0]
    # fetched, the seed is made (and holds ones)
    fetched_plan = P.plan_block(main, 0, scope, names, [loss.name, seed])
    assert not fetched_plan.unit_fills
    lowered = lower_block(main, 0, scope, "cpu", names, [loss.name, seed])
    assert "-> Out=%s" % seed in lowered.code
    out = lowered(values)
    np.testing.assert_array_equal(out[1][0].numpy(), np.ones(out[1][0].shape, np.float32))
    assert got.shape == out[0][0].shape
    # a substitute autograd (the data-parallel runner's) gets the seed tensor: the fill stays
    lowered = lower_block(main, 0, scope, "cpu", names, [loss.name],
                          autograd_for=lambda block, region: (lambda t, x, s: torch.autograd.grad(t, x, s)))
    assert "-> Out=%s" % seed in lowered.code
    lowered(values)


def _fc_net(twice):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[4, 3], dtype="float32")
        label = fluid.data(name="label", shape=[4, 1], dtype="float32")
        pred = L.fc(x, size=2, act="tanh", name="fc_predict",
                    param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.3)))
        loss = L.mean(L.square_error_cost(input=L.reduce_sum(pred * pred, dim=1, keep_dim=True), label=label))
        if twice:       # Paddle's test_backward: append_backward, then minimize on the same loss
            fluid.backward.append_backward(loss)
        fluid.optimizer.SGD(0.5).minimize(loss)
    return main, startup, loss


def test_a_second_backward_over_the_same_loss_wants_only_what_is_read_after_it():
    main, startup, loss = _fc_net(True)
    block = main.global_block()
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
    plan = P.plan_block(main, 0, scope, ["x", "label"], [loss.name])
    first, second = plan.regions
    # each region writes its own gradient of the product (fc's mul fused away; the second backward's are
    # named grad/grad/..., as Paddle 1.8 names a later backward's) and reads it itself; neither makes the
    # other's live, so neither asks for the unfused product
    assert first.wanted == []
    assert sorted(second.wanted) == sorted("grad/grad/" + p.name + "@GRAD" for p in block.all_parameters())
    assert "fused_mul_add_bias" in [s.op.type for s in plan.kernel_steps()]
    feed = {"x": np.arange(12, dtype="float32").reshape(4, 3) / 10, "label": np.ones((4, 1), "float32")}
    got = []
    for twice in (True, False):
        main, startup, loss = _fc_net(twice)
        scope = fluid.Scope()
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup, scope=scope)
        losses = [exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0] for _ in range(2)]
        got.append((losses, np.array(scope.find_var(main.global_block().all_parameters()[0].name).get_tensor())))
    # the first backward's gradients are computed and dropped: the step is the plain minimize's
    np.testing.assert_array_equal(got[0][0], got[1][0])
    np.testing.assert_array_equal(got[0][1], got[1][1])
    assert got[0][0][0] != got[0][0][1]
