"""A conditional_block with a small body (a learning-rate Switch case) runs predicated: its body runs every step
and torch.where keeps its values or the old ones, so the step reads no condition back on the host (a sync per
step on a GPU) and can be captured in one CUDA graph (ops/defs/control_flow.py: predicated). Which bodies
qualify, that the numbers and the scope are those of the host-decided form, and where it falls back."""

import numpy as np
import pytest
import torch

import paddle_compat as fluid
from paddle_compat.ops.defs import control_flow
from paddle_compat.backends.lowering.plan import plan_block
from paddle_compat.ops.defs.control_flow import PREDICATED_MAX_NUMEL, predicated


@pytest.fixture(autouse=True)
def predicate_on_cpu(monkeypatch):
    # the predicated Switch cases a device runs, run here on the CPU (where the host decides by default)
    monkeypatch.setattr(control_flow, "PREDICATE_ON_CPU", True)


L = fluid.layers


def _switch(case_body, default_body=None, shape=(1,)):
    """A program whose Switch on a fed scalar s runs case_body(lr) when s < 1 (default_body otherwise)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        s = L.data("s", shape=[1], dtype="float32", append_batch_size=False)
        lr = L.create_global_var(list(shape), 0.0, "float32", persistable=True, name="lr")
        with L.Switch() as sw:
            with sw.case(L.less_than(s, L.fill_constant([1], "float32", 1.0))):
                case_body(lr)
            with sw.default():
                (default_body or (lambda v: L.assign(L.fill_constant(list(shape), "float32", 0.5), v)))(lr)
    blocks = [o for o in main.global_block().ops if o.type == "conditional_block"]
    return main, startup, lr, blocks


def _assign(value, shape=(1,)):
    return lambda v: L.assign(L.fill_constant(list(shape), "float32", value), v)


def test_which_bodies_run_predicated():
    main, _, _, blocks = _switch(_assign(0.1))
    assert len(blocks) == 2 and all(predicated(o, main) for o in blocks)
    # piecewise_decay and linear_lr_warmup: their Switch cases
    for make in (lambda: L.piecewise_decay([2, 4], [0.1, 0.01, 0.001]),
                 lambda: L.linear_lr_warmup(0.1, 3, 0.0, 0.1)):
        prog = fluid.Program()
        with fluid.program_guard(prog, fluid.Program()), fluid.unique_name.guard():
            make()
        ops = [o for o in prog.global_block().ops if o.type == "conditional_block"]
        assert ops and all(predicated(o, prog) for o in ops)

    def printed(v):
        L.assign(L.Print(L.fill_constant([1], "float32", 0.1)), v)
    main, _, _, blocks = _switch(printed)
    assert not predicated(blocks[0], main) and predicated(blocks[1], main)
    big = (PREDICATED_MAX_NUMEL + 1,)
    main, _, _, blocks = _switch(_assign(0.1, big), _assign(0.5, big), shape=big)
    assert not any(predicated(o, main) for o in blocks)
    # a plan with a host-decided case says so; one with predicated cases is capture-safe
    main, startup, lr, _ = _switch(printed)
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
    v = plan_block(main, 0, scope, ["s"], [lr.name]).capture
    assert not v.safe and "conditional_block" in v.reason, v.reason
    main, startup, lr, _ = _switch(_assign(0.1))
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
    assert plan_block(main, 0, scope, ["s"], [lr.name]).capture.safe


def _run(main, startup, lr, values):
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    got = [float(exe.run(main, feed={"s": np.array([s], "float32")}, fetch_list=[lr], scope=scope)[0][0])
           for s in values]
    return got, scope


def test_a_predicated_switch_picks_the_first_matching_case_without_a_host_read(monkeypatch):
    main, startup, lr, blocks = _switch(_assign(0.1), _assign(0.001))
    assert all(predicated(o, main) for o in blocks)
    reads = []
    item = torch.Tensor.item

    def probe(t):
        reads.append(tuple(t.shape))
        return item(t)
    monkeypatch.setattr(torch.Tensor, "item", probe)
    got, scope = _run(main, startup, lr, [0.5, 1.5, 0.0, 7.0])
    monkeypatch.undo()
    np.testing.assert_array_equal(np.float32(got), np.float32([0.1, 0.001, 0.1, 0.001]))
    assert reads == []
    np.testing.assert_array_equal(np.array(scope.find_var("lr").get_tensor()), np.float32([0.001]))


def test_a_body_that_reshapes_its_output_is_decided_on_the_host():
    # the case writes a [2] value into a [1] variable: where() could not select between them, so it is
    # decided on the host (the variable takes the new shape, as in Paddle) and the step is not capture-safe
    main, startup, lr, blocks = _switch(lambda v: L.assign(L.fill_constant([2], "float32", 0.1), v))
    assert not predicated(blocks[0], main) and predicated(blocks[1], main)
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
    v = plan_block(main, 0, scope, ["s"], [lr.name]).capture
    assert not v.safe and "conditional_block" in v.reason
    got = []
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    for s in (0.5, 2.0):
        got.append(exe.run(main, feed={"s": np.array([s], "float32")}, fetch_list=[lr], scope=scope)[0].tolist())
    assert got[0] == pytest.approx([0.1, 0.1]) and got[1] == pytest.approx([0.5])


def test_an_output_with_no_value_yet_is_decided_on_the_host():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        s = L.data("s", shape=[1], dtype="float32", append_batch_size=False)
        out = L.create_tensor("float32", name="picked")
        with L.Switch() as sw:
            with sw.case(L.less_than(s, L.fill_constant([1], "float32", 1.0))):
                L.assign(L.fill_constant([1], "float32", 3.0), out)
            with sw.default():
                L.assign(L.fill_constant([1], "float32", 4.0), out)
    # (a temporary: it has no value before the Switch on any step, so the verdict does not count on it)
    assert not any(predicated(o, main) for o in main.global_block().ops if o.type == "conditional_block")
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    got = [float(exe.run(main, feed={"s": np.array([v], "float32")}, fetch_list=[out])[0][0]) for v in (0.5, 2.0)]
    assert got == [3.0, 4.0]


@pytest.mark.parametrize("name", ["conv_bn", "switch_lr", "opt_adagrad_warmup"])
def test_predicated_and_host_decided_switches_train_to_the_same_bits(name, monkeypatch):
    # piecewise_decay, a hand-written Switch and linear_lr_warmup, across their boundaries
    import lowering_families as F

    def train(on_cpu):
        monkeypatch.setattr(control_flow, "PREDICATE_ON_CPU", on_cpu)
        main, startup, loss, feeds = F.build(name)
        scope = fluid.Scope()
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup, scope=scope)
        losses = [np.array(exe.run(main, feed=F.exe_feed(feeds[k % len(feeds)]), fetch_list=[loss],
                                   scope=scope)[0]) for k in range(6)]
        state = {n: np.array(scope.find_var(n).get_tensor()) for n in scope.local_var_names()
                 if isinstance(scope.find_var(n).value, torch.Tensor)}
        return losses, state
    (got, got_state), (want, want_state) = train(True), train(False)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert set(got_state) == set(want_state)
    for n, w in want_state.items():
        np.testing.assert_array_equal(got_state[n], w, err_msg=n)
