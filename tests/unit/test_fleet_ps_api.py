"""Fleet's pserver-mode API in one process: the programs minimize builds for a worker and a server,
StrategyFactory's strategies, who-is-who queries, and Paddle's input checks."""

import pytest

import paddle_compat as fluid
from paddle_compat.fluid.incubate.fleet.base import role_maker as rm
from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler import (
    StrategyFactory, TranspilerOptimizer, fleet)
from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import (
    AsyncStrategy, GeoStrategy, HalfAsyncStrategy, SyncStrategy)

SERVERS = ["127.0.0.1:6001", "127.0.0.1:6002"]


@pytest.fixture(autouse=True)
def fresh_fleet():
    fleet.__init__()
    yield
    fleet.__init__()


def _loss():
    x = fluid.layers.data(name="x", shape=[13])
    y = fluid.layers.data(name="y", shape=[1])
    return fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(x, 1), y))


def _types(prog):
    return [op.type for op in prog.global_block().ops]


def test_worker_gets_trainer_program_and_queries():
    fleet.init(rm.UserDefinedRoleMaker(current_id=1, role=rm.Role.WORKER, worker_num=3, server_endpoints=SERVERS))
    opt = fleet.distributed_optimizer(fluid.optimizer.SGD(0.1))
    assert isinstance(opt, TranspilerOptimizer)
    opt.minimize(_loss())
    types = _types(fleet.main_program)
    assert "send" in types and "send_barrier" in types and "recv" in types and "sgd" not in types
    assert "recv" in _types(fleet.startup_program)
    assert fleet.is_worker() and not fleet.is_server() and not fleet.is_first_worker()
    assert (fleet.worker_index(), fleet.worker_num(), fleet.server_num()) == (1, 3, 2)
    assert fleet.server_endpoints(to_string=True) == ",".join(SERVERS)
    assert fleet.split_files(["a", "b", "c", "d", "e"]) == ["c", "d"]   # first 5 % 3 = 2 workers get 2
    assert fleet.main_program._is_distributed


def test_server_gets_its_pserver_programs():
    fleet.init(rm.UserDefinedRoleMaker(current_id=1, role=rm.Role.SERVER, worker_num=2, server_endpoints=SERVERS))
    fleet.distributed_optimizer(fluid.optimizer.Adam(0.01), StrategyFactory.create_sync_strategy()).minimize(_loss())
    assert _types(fleet.main_program) == ["listen_and_serv"]
    assert fleet.main_program.global_block().ops[0].attr("endpoint") == SERVERS[1]
    assert fleet.is_server() and fleet.server_index() == 1


def test_a_worker_cannot_serve():
    fleet.init(rm.UserDefinedRoleMaker(current_id=0, worker_num=1, server_endpoints=SERVERS))
    fleet.distributed_optimizer(fluid.optimizer.SGD(0.1)).minimize(_loss())
    with pytest.raises(RuntimeError, match="is a worker"):
        fleet.run_server()


def test_async_strategy_has_no_barriers():
    fleet.init(rm.UserDefinedRoleMaker(current_id=0, worker_num=2, server_endpoints=SERVERS))
    fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), StrategyFactory.create_async_strategy()).minimize(_loss())
    types = _types(fleet.main_program)
    assert "send" in types and "send_barrier" not in types and "fetch_barrier" not in types


def test_strategy_factory_configs():
    assert isinstance(StrategyFactory.create_sync_strategy(), SyncStrategy)
    # Paddle 1.8's sync strategy: a completely_not_async config (tests/unit/test_strategies_paddle18.py), which
    # the transpiler reads as sync mode
    sync = StrategyFactory.create_sync_strategy().get_program_config()
    assert not sync.sync_mode and sync.runtime_split_send_recv and sync.completely_not_async
    assert sync.frozen().sync_mode and not sync.frozen().runtime_split_send_recv
    a = StrategyFactory.create_async_strategy().get_program_config()
    assert not a.sync_mode and a.runtime_split_send_recv
    h = StrategyFactory.create_half_async_strategy()
    assert isinstance(h, HalfAsyncStrategy) and h.get_program_config().half_async
    g = StrategyFactory.create_geo_strategy(5)
    assert isinstance(g, GeoStrategy) and g.get_program_config().geo_sgd_need_push_nums == 5
    with pytest.raises(ValueError, match="update_frequency"):
        StrategyFactory.create_geo_strategy(0)
    s = AsyncStrategy()
    s.set_program_config({"slice_var_up": False})
    assert not s.get_program_config().slice_var_up and not s.get_program_config().sync_mode
    with pytest.raises(ValueError, match="no field 'nope'"):
        s.set_program_config({"nope": 1})


def test_input_checks():
    with pytest.raises(TypeError, match="role_maker must be a RoleMakerBase"):
        fleet.init("worker")
    with pytest.raises(ValueError, match="fleet.init"):
        fleet.distributed_optimizer(fluid.optimizer.SGD(0.1))
    fleet.init(rm.UserDefinedRoleMaker(current_id=0, worker_num=1, server_endpoints=SERVERS))
    with pytest.raises(TypeError, match="optimizer must be a fluid.optimizer"):
        fleet.distributed_optimizer("sgd")
    with pytest.raises(TypeError, match="strategy must be a DistributeTranspilerConfig"):
        fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), strategy={"sync": True})
    opt = fleet.distributed_optimizer(fluid.optimizer.SGD(0.1))
    with pytest.raises(TypeError, match="not a list"):
        opt.minimize([_loss()])
    with pytest.raises(ValueError, match="minimize"):
        fleet.run_server()
    with pytest.raises(TypeError, match="files must be a list"):
        fleet.split_files("a,b")
    opt.minimize(_loss())
    exe = fluid.Executor()
    with pytest.raises(TypeError, match="executor must be a fluid.Executor"):
        fleet.save_persistables("exe", "/tmp/x")
    pe = fluid.ParallelExecutor.__new__(fluid.ParallelExecutor)
    with pytest.raises(TypeError, match="not a ParallelExecutor"):
        fleet.save_persistables(pe, "/tmp/x")
    with pytest.raises(ValueError, match="local program"):
        fleet.save_persistables(exe, "/tmp/x", main_program=fluid.Program())


def test_init_server_checks_model_dir(tmp_path):
    fleet.init(rm.UserDefinedRoleMaker(current_id=0, role=rm.Role.SERVER, worker_num=1, server_endpoints=SERVERS))
    fleet.distributed_optimizer(fluid.optimizer.SGD(0.1)).minimize(_loss())
    with pytest.raises(ValueError, match="no directory named"):
        fleet.init_server(str(tmp_path / "missing"))
    # the staging directory of an interrupted distributed save: refused, naming the unconfirmed parts
    from paddle_compat.backends.checkpoint_dir import IncompleteCheckpoint, Staging
    st = Staging(str(tmp_path / "ck"), {"fc_0.w_0": "trainer 0, pulled from pserver 1 (127.0.0.1:6175)"})
    with pytest.raises(IncompleteCheckpoint, match=r"parts not confirmed: fc_0.w_0 \(trainer 0, pulled from pserver 1"):
        fleet.init_server(st.path)


def test_distributed_transpiler_spelling_is_the_same_fleet():
    from paddle_compat.fluid.incubate.fleet.parameter_server import distributed_transpiler as other
    assert other.fleet is fleet and other.StrategyFactory is StrategyFactory


def test_barrier_worker_needs_the_job_joined():
    fleet.init(rm.UserDefinedRoleMaker(current_id=0, worker_num=2, server_endpoints=SERVERS))
    with pytest.raises(RuntimeError, match="run fleet.startup_program first"):
        fleet.barrier_worker()


def test_worker_barrier_releases_together_and_names_the_missing(monkeypatch):
    from paddle_compat.backends.ps import worker_barrier

    class FakeService:
        trainers, done, endpoint, elastic = 3, {2}, "127.0.0.1:6001", False

    monkeypatch.setenv("FLAGS_rpc_deadline", "200")
    b = worker_barrier.WorkerBarrier(FakeService())
    f0 = b.arrive(0)
    assert not f0.done()
    f1 = b.arrive(1)                       # worker 2 has finished: 0 and 1 are everyone still training
    assert f0.wait() is True and f1.wait() is True
    f0 = b.arrive(0)                       # next barrier: worker 1 never comes
    with pytest.raises(Exception, match=r"worker\(s\) \[1\] did not arrive within"):
        f0.wait()


def test_worker_barrier_in_elastic_jobs_waits_for_the_connected_workers(monkeypatch):
    """Async / half-async / Geo: the workers connected to pserver 0 now meet; one that leaves releases them."""
    from paddle_compat.backends.ps import worker_barrier

    class Members:
        live = {0, 1}

        def live_ids(self):
            return set(self.live)

    class FakeService:
        trainers, done, endpoint, elastic, members = 4, set(), "127.0.0.1:6001", True, Members()

    monkeypatch.setenv("FLAGS_rpc_deadline", "5000")
    svc = FakeService()
    b = worker_barrier.WorkerBarrier(svc)
    f0 = b.arrive(0)                       # workers 2 and 3 have not joined: not waited for
    assert not f0.done()
    f1 = b.arrive(1)
    assert f0.wait() is True and f1.wait() is True
    f0 = b.arrive(0)
    assert not f0.done()
    svc.members.live = {0}                 # worker 1 vanished (connection closed)
    b.recheck()
    assert f0.wait() is True
