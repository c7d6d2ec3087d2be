"""The half-async communicator (backends/ps/half_async.py) against a stand-in pserver client: merging
(Paddle 1.8's MergeVars mean, MergeAverage for row-sparse), the runners' barrier, bounded queues, the
communicator flags' checks, and the transpiled half-async trainer program."""

import threading

import pytest
import torch

import paddle_compat as fluid
from paddle_compat.backends.ps.communicator_flags import default_flags, parse_flags
from paddle_compat.backends.ps.errors import PsError
from paddle_compat.backends.ps.half_async import HalfAsyncCommunicator, merge_grads
from paddle_compat.backends.ps.records import trainer_plan
from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import (
    StrategyFactory, TrainerRuntimeConfig)

EP = "127.0.0.1:1"


class FakeClient:
    """Records each exchange; answers every wanted block with a tensor holding the exchange's number."""
    trainer_id = 0

    def __init__(self, fail_at=None):
        self.calls = []
        self.fail_at = fail_at
        self.lock = threading.Lock()

    def exchange_async(self, ep, names, tensors, want):
        with self.lock:
            self.calls.append((ep, list(names), list(tensors), list(want)))
            n = len(self.calls)
        fut = torch.futures.Future()
        if self.fail_at == n:
            fut.set_exception(RuntimeError("pserver %s: boom" % ep))
        else:
            fut.set_result([torch.full((2,), float(n)) for _ in want])
        return fut

    def wait(self, ep, fut, what):
        return fut.wait()


def flags(**kw):
    f = parse_flags(default_flags())
    f.update({"communicator_" + k: v for k, v in kw.items()})
    return f


def run_runners(comm, n, steps, grad=lambda r, s: torch.full((2,), float(10 * r + s))):
    comm.set_runners(n)
    out, errors = {}, []

    def work(r):
        try:
            for s in range(steps):
                out[(r, s)] = comm.step({EP: [grad(r, s)]}, {EP: ["w@GRAD"]}, {EP: ["w"]})
        except Exception as e:   # noqa: BLE001
            errors.append(e)
        finally:
            comm.runner_done()

    ts = [threading.Thread(target=work, args=(r,)) for r in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    assert not any(t.is_alive() for t in ts), "runners hung"
    return out, errors


# merging -----------------------------------------------------------------------------------------------
def test_merge_dense_is_the_mean_or_sum():
    a, b, c = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 6.0]), torch.tensor([2.0, 1.0])
    assert torch.equal(merge_grads([a, b, c]), torch.tensor([2.0, 3.0]))
    assert torch.equal(merge_grads([a, b, c], average=False), torch.tensor([6.0, 9.0]))
    assert merge_grads([a]) is a
    with pytest.raises(ValueError, match="nothing to merge"):
        merge_grads([])


def test_merge_rows_unions_rows_and_averages_over_the_payloads():
    g1 = (torch.tensor([0, 3]), torch.tensor([[1.0, 1.0], [2.0, 2.0]]))
    g2 = (torch.tensor([3, 5]), torch.tensor([[4.0, 4.0], [6.0, 6.0]]))
    rows, values = merge_grads([g1, g2])
    assert rows.tolist() == [0, 3, 5]
    # as the mean of the two densified gradients: row 3 is (2 + 4) / 2, rows 0 and 5 are halved
    assert values.tolist() == [[0.5, 0.5], [3.0, 3.0], [3.0, 3.0]]
    rows, values = merge_grads([g1, g2], average=False)
    assert values.tolist() == [[1.0, 1.0], [6.0, 6.0], [6.0, 6.0]]


# the communicator ---------------------------------------------------------------------------------------
def test_two_runners_are_merged_into_one_send_per_round():
    client = FakeClient()
    comm = HalfAsyncCommunicator(client, flags(max_merge_var_num=2, send_queue_size=2))
    out, errors = run_runners(comm, 2, 5)
    comm.flush_and_stop()
    assert not errors
    assert len(client.calls) == 5 and comm.stats["rounds"] == 5
    assert comm.stats["sends"]["w@GRAD"] == 5 and comm.stats["merged"]["w@GRAD"] == 10
    for _, names, tensors, want in client.calls:
        assert names == ["w@GRAD"] and want == ["w"]
    # round s sent the mean of both runners' step-s gradients: (s + 10 + s) / 2
    assert sorted(float(t[0][0]) for _, _, t, _ in client.calls) == [5.0 + s for s in range(5)]
    # both runners of a round got that round's parameters
    for s in range(5):
        assert torch.equal(out[(0, s)][EP][0], out[(1, s)][EP][0])


def test_merge_num_one_sends_every_gradient_and_a_lone_runner_never_waits():
    client = FakeClient()
    comm = HalfAsyncCommunicator(client, flags(max_merge_var_num=1, send_queue_size=1, send_wait_times=100))
    out, errors = run_runners(comm, 1, 4)
    comm.flush_and_stop()
    assert not errors and comm.stats["sends"]["w@GRAD"] == 4 and comm.stats["rounds"] == 4
    assert [float(out[(0, s)][EP][0][0]) for s in range(4)] == [1.0, 2.0, 3.0, 4.0]


def test_a_round_merges_at_most_max_merge_and_leftovers_are_sent_not_lost():
    client = FakeClient()
    # 3 runners, merge 2 per send, queue of 3: a round leaves one gradient behind; the queue fills and is
    # sent early, and what is left at the end goes out at flush_and_stop
    comm = HalfAsyncCommunicator(client, flags(max_merge_var_num=2, send_queue_size=3, send_wait_times=0))
    out, errors = run_runners(comm, 3, 6)
    comm.flush_and_stop()
    assert not errors
    assert comm.stats["merged"]["w@GRAD"] == 18           # every gradient sent once
    assert comm.stats["sends"]["w@GRAD"] >= 9              # never more than 2 in one send
    assert comm.stats["rounds"] == 6


def test_a_full_queue_does_not_deadlock_the_round():
    client = FakeClient()
    comm = HalfAsyncCommunicator(client, flags(max_merge_var_num=1, send_queue_size=1, send_wait_times=0))
    out, errors = run_runners(comm, 2, 5)
    comm.flush_and_stop()
    assert not errors and comm.stats["merged"]["w@GRAD"] == 10
    assert comm.stats["early_sends"] > 0


def test_thread_pool_size_bounds_the_exchanges_in_flight():
    class Counting(FakeClient):
        def __init__(self):
            super().__init__()
            self.pending = self.peak = 0

        def exchange_async(self, ep, names, tensors, want):
            self.pending += 1
            self.peak = max(self.peak, self.pending)
            return super().exchange_async(ep, names, tensors, want)

        def wait(self, ep, fut, what):
            self.pending -= 1
            return fut.wait()

    client = Counting()
    comm = HalfAsyncCommunicator(client, flags(thread_pool_size=2))
    eps = ["127.0.0.1:%d" % i for i in range(5)]
    comm.step({ep: [torch.ones(1)] for ep in eps}, {ep: ["g"] for ep in eps}, {ep: ["p"] for ep in eps})
    comm.flush_and_stop()
    assert len(client.calls) == 5 and client.peak == 2


def test_a_failed_send_reaches_the_runners():
    comm = HalfAsyncCommunicator(FakeClient(fail_at=2), flags(max_merge_var_num=1, send_queue_size=2))
    out, errors = run_runners(comm, 1, 4)
    assert len(out) == 1 and len(errors) == 1
    assert isinstance(errors[0], PsError) and "half-async send thread failed" in str(errors[0])
    assert "boom" in str(errors[0])


# flags ----------------------------------------------------------------------------------------------------
def test_defaults_and_environment_are_paddle18s(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "3")
    monkeypatch.setenv("FLAGS_communicator_send_wait_times", "7")
    f = TrainerRuntimeConfig().get_communicator_flags()
    assert f["communicator_max_merge_var_num"] == "3" and f["communicator_send_queue_size"] == "3"
    assert f["communicator_thread_pool_size"] == "5" and f["communicator_send_wait_times"] == "7"


@pytest.mark.parametrize("field,value,msg", [
    ("communicator_max_merge_var_num", "0", "must be >= 1"),
    ("communicator_send_queue_size", "many", "must be an integer"),
    ("communicator_thread_pool_size", 2.5, "must be an integer"),
    ("communicator_send_wait_times", "-1", "must be >= 0"),
    ("communicator_is_sgd_optimizer", "2", "must be 0 or 1"),
])
def test_bad_values_name_their_field(field, value, msg):
    s = StrategyFactory.create_half_async_strategy()
    with pytest.raises(ValueError, match="%s %s" % (field, msg)):
        s.set_trainer_runtime_config({field: value})
    cfg = TrainerRuntimeConfig()
    cfg.runtime_configs[field] = value
    with pytest.raises(ValueError, match=field):
        cfg.get_communicator_flags()


def test_unknown_field_is_named():
    with pytest.raises(ValueError, match="no field 'communicator_max_merge'"):
        StrategyFactory.create_half_async_strategy().set_trainer_runtime_config({"communicator_max_merge": 2})


def test_bad_environment_flag_is_named_at_minimize(monkeypatch):
    from paddle_compat.fluid.incubate.fleet.base import role_maker
    from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
    monkeypatch.setenv("FLAGS_communicator_send_queue_size", "zero")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 3], "float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        fleet.init(role_maker.UserDefinedRoleMaker(current_id=0, role=role_maker.Role.WORKER, worker_num=2,
                                                   server_endpoints=["127.0.0.1:6170"]))
        with pytest.raises(ValueError, match="communicator_send_queue_size must be an integer"):
            fleet.distributed_optimizer(fluid.optimizer.SGD(0.1),
                                        StrategyFactory.create_half_async_strategy()).minimize(loss)


# the transpiled program -----------------------------------------------------------------------------------
def _trainer(cfg):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 3], "float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        fluid.optimizer.SGD(0.1).minimize(loss)
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(0, program=main, startup_program=startup, pservers="127.0.0.1:6170,127.0.0.1:6171", trainers=2,
                sync_mode=cfg.sync_mode)
    return t.get_trainer_program(), startup


def test_half_async_trainer_program_has_paddles_send_barrier():
    cfg = fluid.DistributeTranspilerConfig()
    cfg.sync_mode, cfg.runtime_split_send_recv, cfg.half_async = False, True, True
    prog, startup = _trainer(cfg)
    types = [op.type for op in prog.global_block().ops]
    barrier = [op for op in prog.global_block().ops if op.type == "send_barrier"]
    assert len(barrier) == 1 and barrier[0].attrs["half_async"] is True
    assert types.index("send_barrier") > max(i for i, t in enumerate(types) if t == "send")
    assert types.index("send_barrier") < types.index("recv") and "fetch_barrier" not in types
    assert trainer_plan(prog).half_async and trainer_plan(startup).half_async
    cfg = fluid.DistributeTranspilerConfig()
    cfg.sync_mode, cfg.runtime_split_send_recv = False, True
    prog, _ = _trainer(cfg)
    assert "send_barrier" not in [op.type for op in prog.global_block().ops] and not trainer_plan(prog).half_async


def _fleet_worker_minimize(strategy):
    from paddle_compat.fluid.incubate.fleet.base import role_maker
    from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 3], "float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        fleet.init(role_maker.UserDefinedRoleMaker(current_id=0, role=role_maker.Role.WORKER, worker_num=2,
                                                   server_endpoints=["127.0.0.1:6170"]))
        fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), strategy).minimize(loss)
    return fleet.main_program


def test_fleet_carries_the_strategys_flags_and_paddles_config_rule(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "4")
    s = StrategyFactory.create_half_async_strategy()
    s.set_trainer_runtime_config({"communicator_max_merge_var_num": 4, "communicator_send_queue_size": "8",
                                  "communicator_thread_pool_size": "3"})
    # as Paddle 1.8: in half-async mode the merge count and the queue size are CPU_NUM (a warning says so)
    with pytest.warns(UserWarning, match="communicator_send_queue_size must equal CPU_NUM"):
        info = trainer_plan(_fleet_worker_minimize(s))
    assert info.half_async
    assert info.communicator_flags["communicator_max_merge_var_num"] == "4"
    assert info.communicator_flags["communicator_send_queue_size"] == "4"
    assert info.communicator_flags["communicator_thread_pool_size"] == "3"
    # Paddle 1.8's fleet: a not-sync DistributeTranspilerConfig that does not split at run time is half-async
    cfg = fluid.DistributeTranspilerConfig()
    cfg.sync_mode = False
    assert trainer_plan(_fleet_worker_minimize(cfg)).half_async and cfg.half_async
    assert not trainer_plan(_fleet_worker_minimize(StrategyFactory.create_async_strategy())).half_async


def test_communicator_envs_set_the_flags_and_name_a_bad_one():
    from paddle_compat.fluid.communicator import Communicator
    from paddle_compat.fluid.transpiler.distribute_transpiler import DistributedMode
    prog = _fleet_worker_minimize(StrategyFactory.create_half_async_strategy())
    Communicator(prog, DistributedMode.HALF_ASYNC, None, {"communicator_max_merge_var_num": "6"})
    assert trainer_plan(prog).communicator_flags["communicator_max_merge_var_num"] == "6"
    with pytest.raises(ValueError, match="Communicator envs: communicator_thread_pool_size must be >= 1"):
        Communicator(prog, DistributedMode.HALF_ASYNC, None, {"communicator_thread_pool_size": "0"})
