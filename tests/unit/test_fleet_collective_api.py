"""Role resolution (one pure function), role makers and the collective Fleet front end, in one process."""

import subprocess
import sys
import warnings

import pytest

import paddle_compat as fluid
from paddle_compat.backends.cluster import ClusterEnvError, resolve_cluster
from paddle_compat.fluid.incubate.fleet.base import role_maker
from paddle_compat.fluid.incubate.fleet.base.fleet_base import DistributedOptimizer, Fleet, Mode
from paddle_compat.fluid.incubate.fleet.collective import (Collective, CollectiveOptimizer, DistributedStrategy,
                                                            fleet)
from dist_utils import base_env

EPS = "127.0.0.1:6170,127.0.0.1:6171,127.0.0.1:6172"


def paddle_env(**kw):
    env = {"PADDLE_TRAINER_ID": "1", "PADDLE_TRAINER_ENDPOINTS": EPS, "PADDLE_CURRENT_ENDPOINT": "127.0.0.1:6171",
           "PADDLE_TRAINERS_NUM": "3"}
    env.update(kw)
    return {k: v for k, v in env.items() if v is not None}


def test_paddle_env_resolves_to_a_frozen_spec():
    spec = resolve_cluster(paddle_env())
    assert spec.current_id == 1 and spec.worker_num == 3 and spec.current_endpoint == "127.0.0.1:6171"
    assert spec.worker_endpoints == tuple(EPS.split(",")) and spec.source == "PADDLE_*" and not spec.is_first_worker
    with pytest.raises(AttributeError):
        spec.current_id = 0
    assert resolve_cluster(paddle_env()) == spec                 # pure: same input, same answer


@pytest.mark.parametrize("env,match", [
    (paddle_env(PADDLE_TRAINER_ID=None), "PADDLE_TRAINER_ID is not set"),
    (paddle_env(PADDLE_TRAINER_ID="one"), "PADDLE_TRAINER_ID must be an integer, got 'one'"),
    (paddle_env(PADDLE_TRAINER_ID="3"), "PADDLE_TRAINER_ID=3 is out of range"),
    (paddle_env(PADDLE_TRAINER_ENDPOINTS=None), "PADDLE_TRAINER_ENDPOINTS is not set"),
    (paddle_env(PADDLE_TRAINER_ENDPOINTS="127.0.0.1:1,nohost"), "PADDLE_TRAINER_ENDPOINTS entry 'nohost'"),
    (paddle_env(PADDLE_TRAINERS_NUM="2"), "PADDLE_TRAINERS_NUM=2 but PADDLE_TRAINER_ENDPOINTS lists 3"),
    (paddle_env(PADDLE_CURRENT_ENDPOINT="127.0.0.1:6170"), "PADDLE_CURRENT_ENDPOINT=127.0.0.1:6170 is not entry 1"),
    (paddle_env(PADDLE_TRAINING_ROLE="PSERVER"), "PADDLE_TRAINING_ROLE"),
    ({}, "PADDLE_TRAINER_ID and PADDLE_TRAINER_ENDPOINTS"),
    ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_PORT": "29500"}, "MASTER_ADDR is not set"),
    ({"RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}, "WORLD_SIZE is not set"),
    ({"RANK": "2", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}, "RANK=2 is out of range"),
    ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "x"}, "MASTER_PORT must be an int"),
])
def test_bad_environment_names_the_variable(env, match):
    with pytest.raises(ClusterEnvError, match=match):
        resolve_cluster(env)


def test_torchrun_endpoints_are_derived_and_said():
    env = {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    spec = resolve_cluster(env)
    assert spec.worker_endpoints == ("127.0.0.1:29501", "127.0.0.1:29502") and spec.current_id == 1
    assert spec.source == "torchrun" and "MASTER_PORT+1+rank" in spec.notes[0]


def test_paddle_variables_win_over_torchrun():
    env = paddle_env(RANK="0", WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT="29500")
    assert resolve_cluster(env).source == "PADDLE_*"


def test_cloud_role_maker_reads_the_environment(monkeypatch):
    for k, v in paddle_env().items():
        monkeypatch.setenv(k, v)
    rm = role_maker.PaddleCloudRoleMaker(is_collective=True)
    rm.generate_role()
    assert rm.is_worker() and not rm.is_server() and rm.worker_index() == 1 and rm.worker_num() == 3
    assert rm.get_trainer_endpoints() == EPS.split(",") and rm.get_pserver_endpoints() == []


def test_cloud_role_maker_warns_about_derived_endpoints(monkeypatch):
    for k in list(paddle_env()):
        monkeypatch.delenv(k, raising=False)
    for k, v in {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}.items():
        monkeypatch.setenv(k, v)
    rm = role_maker.PaddleCloudRoleMaker(is_collective=True)
    with pytest.warns(UserWarning, match="derived from torchrun"):
        rm.generate_role()
    assert rm.is_first_worker()


@pytest.mark.parametrize("args,exc,match", [
    (dict(current_id=0, worker_endpoints=None), ValueError, "worker_endpoints must be a non-empty list"),
    (dict(current_id=0, worker_endpoints=[]), ValueError, "worker_endpoints must be a non-empty list"),
    (dict(current_id=2, worker_endpoints=["127.0.0.1:1", "127.0.0.1:2"]), ValueError, "current_id 2 is out of range"),
    (dict(current_id=-1, worker_endpoints=["127.0.0.1:1"]), ValueError, "current_id must be >= 0"),
    (dict(current_id="0", worker_endpoints=["127.0.0.1:1"]), TypeError, "current_id must be an int"),
    (dict(current_id=0, worker_endpoints=["127.0.0.1:1", "127.0.0.1:1"]), ValueError, "more than once"),
])
def test_user_defined_collective_role_maker_validates(args, exc, match):
    with pytest.raises(exc, match=match):
        role_maker.UserDefinedCollectiveRoleMaker(**args)


def _fleet(current_id=0, n=2):
    f = Collective()
    f.init(role_maker.UserDefinedCollectiveRoleMaker(current_id, ["127.0.0.1:%d" % (7000 + i) for i in range(n)]))
    return f


def test_fleet_queries_and_split_files():
    f = _fleet(1, 3)
    assert (f.worker_index(), f.worker_num(), f.is_worker(), f.is_server(), f.is_first_worker()) == (1, 3, True,
                                                                                                    False, False)
    assert f.worker_endpoints(to_string=True) == "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002"
    assert f.server_num() == 0 and f.server_endpoints() == []
    files = ["a", "b", "c", "d", "e"]
    assert [_fleet(i, 3).split_files(files) for i in range(3)] == [["a", "b"], ["c", "d"], ["e"]]
    assert [_fleet(i, 3).split_files(["a", "b"]) for i in range(3)] == [["a"], ["b"], []]
    with pytest.raises(TypeError, match="files must be a list"):
        f.split_files("abc")


def test_fleet_init_checks_its_argument():
    with pytest.raises(TypeError, match="role_maker must be a RoleMakerBase"):
        Collective().init("worker")
    with pytest.raises(RuntimeError, match=r"call fleet.init\(role_maker\) first"):
        Collective().worker_index()
    assert isinstance(fleet, Collective) and isinstance(fleet, Fleet) and fleet._mode == Mode.COLLECTIVE


def test_distributed_strategy_defaults():
    s = DistributedStrategy()
    assert isinstance(s, fluid.BuildStrategy)
    assert (s.use_local_sgd, s.mode, s.collective_mode, s.nccl_comm_num, s.forward_recompute,
            s.recompute_checkpoints, s.use_amp, s.amp_loss_scaling) == (False, "nccl2", None, 1, False, [], False,
                                                                        2 ** 15)
    assert isinstance(s.exec_strategy, fluid.ExecutionStrategy)


def test_collective_optimizer_checks():
    with pytest.raises(TypeError, match="optimizer must be a fluid.optimizer.Optimizer"):
        CollectiveOptimizer("sgd")
    with pytest.raises(TypeError, match="strategy must be a fleet.collective.DistributedStrategy"):
        CollectiveOptimizer(fluid.optimizer.SGD(0.1), fluid.DistributeTranspilerConfig())
    assert isinstance(CollectiveOptimizer(fluid.optimizer.SGD(0.1)), DistributedOptimizer)


def _minimize(strategy, worker_num=2):
    import paddle_compat.fluid.incubate.fleet.collective as coll
    f = _fleet(0, worker_num)
    old, coll.fleet = coll.fleet, f
    try:
        x = fluid.layers.data(name="x", shape=[3], dtype="float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        f.distributed_optimizer(fluid.optimizer.SGD(0.1), strategy).minimize(loss)
    finally:
        coll.fleet = old
    return f


def test_minimize_nccl2_gives_a_data_parallel_compiled_program():
    s = DistributedStrategy()
    f = _minimize(s)
    assert isinstance(f.main_program, fluid.CompiledProgram) and f.main_program._is_data_parallel
    assert (s.num_trainers, s.trainer_id, s.trainers_endpoints) == (2, 0, ["127.0.0.1:7000", "127.0.0.1:7001"])
    assert f.startup_program.global_block().ops[-1].type == "gen_nccl_id"
    assert not any(op.type.startswith("c_") for op in f._origin_program.global_block().ops)


def test_forward_recompute_wraps_the_optimizer_in_recompute():
    import paddle_compat.fluid.incubate.fleet.collective as coll
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[3], dtype="float32")
        h = fluid.layers.fc(x, 4, act="relu")
        loss = fluid.layers.mean(fluid.layers.fc(fluid.layers.fc(h, 4, act="tanh"), 1))
        s = DistributedStrategy()
        s.mode, s.collective_mode = "collective", "grad_allreduce"
        s.forward_recompute, s.recompute_checkpoints = True, [h]
        f = _fleet(0, 2)
        old, coll.fleet = coll.fleet, f
        try:
            f.distributed_optimizer(fluid.optimizer.SGD(0.1), s).minimize(loss)
            s2 = DistributedStrategy()
            s2.forward_recompute, s2.recompute_checkpoints = True, [h]
            opt = fluid.optimizer.RecomputeOptimizer(fluid.optimizer.SGD(0.1))
            with pytest.raises(ValueError, match="can not use RecomputeOptimizer"):
                f.distributed_optimizer(opt, s2).minimize(loss)
        finally:
            coll.fleet = old
    assert any(n.endswith(".subprog_0") for n in main.global_block().vars)


def test_minimize_local_sgd_gives_the_transpiled_program():
    s = DistributedStrategy()
    s.use_local_sgd = True
    f = _minimize(s)
    assert isinstance(f.main_program, fluid.Program) and (s.mode, s.collective_mode) == ("collective", "local_sgd")
    assert any(op.type == "c_allreduce_sum" for op in f.main_program.global_block().ops)


def test_minimize_with_amp_decorates_the_optimizer():
    # as Paddle 1.8: use_amp wraps the optimizer in OptimizerWithMixedPrecision (dynamic loss scaling from
    # amp_loss_scaling), and the collective transpile follows
    s = DistributedStrategy()
    s.use_amp, s.mode, s.collective_mode = True, "collective", "grad_allreduce"
    s.amp_loss_scaling = 8.0
    types = [op.type for op in _minimize(s).main_program.global_block().ops]
    assert "isfinite" in types and "update_loss_scaling" in types and "c_allreduce_sum" in types


def test_a_decorated_optimizer_is_accepted_and_not_decorated_twice():
    import paddle_compat.fluid.incubate.fleet.collective as coll
    amp = fluid.contrib.mixed_precision.decorate(fluid.optimizer.Adam(), init_loss_scaling=1.0)
    assert isinstance(coll.CollectiveOptimizer(amp)._optimizer, type(amp))
    s = DistributedStrategy()
    s.use_amp = True
    with pytest.raises(ValueError, match="can not use OptimizerWithMixedPrecision when you set "
                                         "DistStrategy.mixed_precision as True"):
        coll.CollectiveOptimizer(amp, strategy=s).minimize(None)


@pytest.mark.parametrize("field,value,exc,match", [
    ("collective_mode", "grad_allreduce", ValueError, "needs mode='collective'"),
    ("mode", "pserver", ValueError, "mode must be 'nccl2' or 'collective'"),
    ("forward_recompute", True, ValueError, "recompute_checkpoints"),
])
def test_minimize_rejects_bad_strategies(field, value, exc, match):
    s = DistributedStrategy()
    setattr(s, field, value)
    with pytest.raises(exc, match=match):
        _minimize(s)


def test_server_side_calls_only_warn():
    f = _fleet()
    for call in (f.init_worker, f.init_server, f.run_server, f.stop_worker):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call()
        assert any("does nothing in collective mode" in str(x.message) for x in w)


def test_fleet_modules_do_not_import_torch():
    code = ("import sys\n"
            "from paddle_compat.fluid.incubate.fleet.collective import fleet, DistributedStrategy\n"
            "from paddle_compat.fluid.incubate.fleet.base import role_maker, fleet_base\n"
            "import paddle_compat.fluid.transpiler.nccl2, paddle_compat.fluid.transpiler.collective\n"
            "print([m for m in ('torch', 'mpi4py') if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], env=base_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
