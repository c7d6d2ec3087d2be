"""Pserver runtime pieces in one process (no RPC): the optimize runner's sync/async/DC-ASGD arithmetic, the
service's sync rounds, and how comm ops batch into exchanges."""

import collections
import os

import numpy as np
import pytest
import torch

import paddle_compat as fluid
import reference_data as R
from paddle_compat.backends.ps.errors import PsError, remote_message
from paddle_compat.backends.ps.optimize import OptimizeRunner
from paddle_compat.backends.ps.records import trainer_plan

EPS = "127.0.0.1:6174,127.0.0.1:6175"
FIT_INIT, MLP_INIT = R.make_init()


def _pserver(sync=True, dc_asgd=False, lr=0.1, ep="127.0.0.1:6175"):
    R.build_fit_a_line(fluid, FIT_INIT, lr=lr)
    cfg = fluid.DistributeTranspilerConfig()
    cfg.enable_dc_asgd = dc_asgd
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(0, pservers=EPS, trainers=2, sync_mode=sync)
    prog, startup = t.get_pserver_programs(ep)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    return prog, scope, OptimizeRunner(prog, scope, "cpu", exe)


def _w(scope):
    return scope.find_var("fc_0.w_0").value


def test_sync_step_averages_and_counts_a_finished_trainer_as_zero():
    prog, scope, runner = _pserver()
    w0 = _w(scope).clone()
    g0, g1 = torch.randn(13, 1), torch.randn(13, 1)
    runner.run_sync({"fc_0.w_0@GRAD.trainer_0": g0, "fc_0.w_0@GRAD.trainer_1": g1})
    torch.testing.assert_close(_w(scope), w0 - 0.1 * ((g0 + g1) * 0.5), rtol=0, atol=1e-7)
    w1 = _w(scope).clone()
    runner.run_sync({"fc_0.w_0@GRAD.trainer_0": g0})        # trainer 1 is done
    torch.testing.assert_close(_w(scope), w1 - 0.1 * (g0 * 0.5), rtol=0, atol=1e-7)


def test_async_applies_each_push():
    prog, scope, runner = _pserver(sync=False)
    w0 = _w(scope).clone()
    g = torch.randn(13, 1)
    runner.run_async(1, {"fc_0.w_0@GRAD": g})
    torch.testing.assert_close(_w(scope), w0 - 0.1 * g, rtol=0, atol=1e-7)


def test_dc_asgd_compensates_with_the_trainers_last_pull():
    prog, scope, runner = _pserver(sync=False, dc_asgd=True)
    runner.remember_pull(0, {"fc_0.w_0"})
    bak = _w(scope).clone()
    _w(scope).add_(0.05)                                   # another trainer's update lands meanwhile
    w = _w(scope).clone()
    g = torch.randn(13, 1)
    runner.run_async(0, {"fc_0.w_0@GRAD": g})
    want = w - 0.1 * (g + g * g * (w - bak))
    torch.testing.assert_close(_w(scope), want, rtol=0, atol=1e-6)


def test_unknown_gradient_is_named():
    prog, scope, runner = _pserver()
    with pytest.raises(PsError, match="fc_9.w_0@GRAD"):
        runner.check_names(1, ["fc_9.w_0@GRAD"], "127.0.0.1:6175")


def test_service_sync_round_answers_both_trainers_after_the_last_arrives():
    from paddle_compat.backends.ps.service import PServerService
    prog, scope, runner = _pserver()
    svc = PServerService(prog, scope, "cpu")
    svc.runner = runner

    class _Group:
        def mark_done(self, name):
            pass
    svc.group = _Group()
    w0 = _w(scope).clone()
    g0, g1 = torch.ones(13, 1), 3 * torch.ones(13, 1)
    f0 = svc._exchange(0, ["fc_0.w_0@GRAD.trainer_0"], [g0], ["fc_0.w_0"])
    assert not f0.done()
    f1 = svc._exchange(1, ["fc_0.w_0@GRAD.trainer_1"], [g1], ["fc_0.w_0"])
    assert f0.done() and f1.done()
    torch.testing.assert_close(f0.wait()[0], w0 - 0.1 * 2.0)
    with pytest.raises(PsError, match="twice"):
        svc._exchange(0, ["fc_0.w_0@GRAD.trainer_0"], [g0], [])
        svc._exchange(0, ["fc_0.w_0@GRAD.trainer_0"], [g0], [])
    svc._peer_done(1)                                       # the open round completes without trainer 1
    assert svc.round is None and svc.step == 2


def test_remote_message_keeps_only_the_reason():
    raw = ("PsError: On WorkerInfo(id=0, name=pserver_0):\nPsError('pserver 127.0.0.1:1: lost trainer 1: "
           "its process died (eof (this error originated at tensorpipe/transport/shm/connection_impl.cc:259))')\n"
           "Traceback (most recent call last):\n  ...")
    assert remote_message(RuntimeError(raw)) == "pserver 127.0.0.1:1: lost trainer 1: its process died (eof)"


def test_comm_ops_batch_into_one_exchange_per_pserver():
    from paddle_compat.backends.ps import comm_plan

    R.build_mlp(fluid, MLP_INIT)
    t = fluid.DistributeTranspiler()
    t.transpile(0, pservers=EPS, trainers=2)
    main = t.get_trainer_program(wait_port=False)
    calls = []

    class _Client:
        info = trainer_plan(main)
        stats = collections.Counter()

        def exchange_async(self, ep, names, tensors, want):
            calls.append((ep, list(names), want))
            fut = torch.futures.Future()
            fut.set_result([torch.zeros(trainer_plan(main).remote_vars["fc_0.w_0"]["shape"])[:1]] * len(want))
            return fut

        def wait(self, ep, fut, what):
            return fut.wait()

    class _Ctx:
        program, block, device, executor = main, main.global_block(), "cpu", None

    old = comm_plan.for_executor
    comm_plan.for_executor = lambda exe, info: _Client()
    try:
        plan = comm_plan.CommPlan(_Ctx())
    finally:
        comm_plan.for_executor = old
    ops = main.global_block().ops
    (g,) = {id(grp): grp for grp in plan.at.values()}.values()
    assert g.issue_at == next(i for i, op in enumerate(ops) if op.type == "send_barrier")
    assert g.finish_at == next(i for i, op in enumerate(ops) if op.type == "fetch_barrier")
    assert sorted(g.eps) == sorted(EPS.split(","))
    # each pserver's one call carries all its gradient blocks and asks for all its parameter blocks
    assert sorted(g.names["127.0.0.1:6174"]) == sorted(["fc_0.b_0@GRAD.trainer_0", "fc_0.w_0@GRAD.block1.trainer_0",
                                                        "fc_1.w_0@GRAD.block0.trainer_0", "fc_2.b_0@GRAD.trainer_0"])
    assert sorted(g.want["127.0.0.1:6174"]) == ["fc_0.b_0", "fc_0.w_0.block1", "fc_1.w_0.block0", "fc_2.b_0"]
    for i in g.sends:
        plan.stage(g, i, ops[i], [torch.zeros(1)] * len(ops[i].input("X")))
    plan.issue(g)
    assert len(calls) == 2 and {c[0] for c in calls} == set(EPS.split(","))
    assert np.all([len(c[1]) == 4 for c in calls])


@pytest.mark.parametrize("sync", [True, False])
def test_a_non_finite_push_is_refused_before_anything_is_applied(sync):
    from paddle_compat.backends.ps.service import PServerService
    prog, scope, runner = _pserver(sync=sync)
    svc = PServerService(prog, scope, "cpu")
    svc.runner = runner
    w0 = _w(scope).clone()
    name = "fc_0.w_0@GRAD" + (".trainer_1" if sync else "")
    bad = torch.ones(13, 1)
    bad[4, 0] = float("nan")
    with pytest.raises(PsError, match=r"pserver 127.0.0.1:6175 refused the push of trainer 1: its gradient "
                                      r"'%s' holds NaN" % name.replace(".", r"\.")):
        svc._exchange(1, [name], [bad], ["fc_0.w_0"])
    bad[4, 0] = float("inf")
    with pytest.raises(PsError, match="holds inf"):
        svc._exchange(1, [name], [bad], ["fc_0.w_0"])
    # row-sparse values are checked too
    with pytest.raises(PsError, match="holds NaN"):
        svc._exchange(1, [name], [(torch.tensor([2]), torch.full((1, 1), float("nan")))], [])
    assert torch.equal(_w(scope), w0)
    assert svc.round is None or not svc.round.grads       # nothing staged for a sync step either
    got = svc._exchange(1, [name], [torch.ones(13, 1)], ["fc_0.w_0"])   # a finite push still goes through
    if not sync:
        assert not torch.equal(got[0], w0)


def test_membership_sync_and_elastic():
    from paddle_compat.backends.ps.membership import Membership
    from paddle_compat.backends.wire.auth import Refused, TryLater
    m = Membership("pserver x", 2, "d", elastic=False)
    assert m.admit("trainer 0|d|0", "a:1") == 0
    with pytest.raises(Refused, match="two processes claim to be trainer 0"):
        m.admit("trainer 0|d|0", "a:2")
    with pytest.raises(Refused, match="transpiled differently"):
        m.admit("trainer 1|other|0", "a:3")
    with pytest.raises(Refused, match="not one of the job's 2 trainers"):
        m.admit("trainer 5|d|0", "a:3")
    with pytest.raises(TryLater, match="still serving job 0"):
        m.admit("trainer 1|other|1", "a:3")        # the script's next job
    with pytest.raises(Refused, match="not one"):
        m.admit("pserver 1|d|0", "a:3")
    assert "without Executor.close()" in m.closed(0, "a:1", "connection closed")      # sync: lost
    m2 = Membership("pserver x", 2, "d", elastic=True)
    m2.admit("trainer 0|d|0", "a:1")
    assert m2.closed(0, "a:1", "connection closed") is not None and 0 in m2.left   # vanished, logged
    assert m2.admit("trainer 0|d|0", "a:4") == 0 and 0 not in m2.left             # and back
    with pytest.raises(TryLater, match="two processes claim to be trainer 0"):      # (elastic: retried)
        m2.admit("trainer 0|d|0", "a:9")
    m2.done(0)
    m2.closed(0, "a:4", "connection closed")
    assert not m2.all_finished() and m2.overdue(1000) is None
    m2.idle_since -= 5
    why = m2.overdue(1)
    assert "trainer(s) [1] have not finished: trainer 1 never connected" in why
    m2.admit("trainer 1|d|0", "a:5")
    m2.done(1)
    assert not m2.all_finished()                 # finished, still connected
    assert m2.closed(1, "a:5", "connection closed") is None and m2.all_finished()


def test_the_finite_check_takes_large_finite_gradients():
    """The check sums first; a finite gradient whose sum overflows float32 is then checked element by element
    and accepted."""
    from paddle_compat.backends.ps.service import _check_finite
    big = torch.full((4,), 3e38)
    assert not torch.isfinite(big.sum())
    _check_finite("127.0.0.1:1", 0, ["w@GRAD", "e@GRAD"], [big, (torch.tensor([1]), torch.full((1, 2), -3e38))])
    with pytest.raises(PsError, match="'e@GRAD' holds inf"):
        _check_finite("127.0.0.1:1", 0, ["w@GRAD", "e@GRAD"],
                      [big, (torch.tensor([1]), torch.full((1, 2), -float("inf")))])
