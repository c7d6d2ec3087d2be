"""Role makers of pserver mode: each environment contract, and each malformed input named in its error.
(Collective contracts: tests/unit/test_fleet_collective_api.py.)"""

import pytest

import paddle_compat as fluid

from paddle_compat.backends.cluster import SERVER, WORKER, ClusterEnvError, resolve_cluster, resolve_general
from paddle_compat.fluid.incubate.fleet.base import role_maker as rm

SERVERS = "127.0.0.1:6170,127.0.0.1:6171"


def ps_env(**kw):
    env = {"PADDLE_PSERVERS_IP_PORT_LIST": SERVERS, "PADDLE_TRAINERS_NUM": "2"}
    env.update({k: str(v) for k, v in kw.items()})
    return env


def test_paddlecloud_ps_trainer():
    spec = resolve_cluster(ps_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=1), is_collective=False)
    assert (spec.role, spec.current_id, spec.worker_num) == (WORKER, 1, 2)
    assert spec.server_endpoints == ("127.0.0.1:6170", "127.0.0.1:6171") and not spec.is_first_worker
    assert resolve_cluster(ps_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=1), is_collective=False) == spec


def test_paddlecloud_ps_server_finds_itself_by_pod_ip_and_port():
    spec = resolve_cluster(ps_env(TRAINING_ROLE="PSERVER", POD_IP="127.0.0.1", PADDLE_PORT=6171), is_collective=False)
    assert (spec.role, spec.current_id, spec.current_endpoint) == (SERVER, 1, "127.0.0.1:6171")
    spec = resolve_cluster(ps_env(PADDLE_TRAINING_ROLE="PSERVER", POD_IP="127.0.0.1", PADDLE_PORT=6170),
                           is_collective=False)
    assert spec.current_id == 0


@pytest.mark.parametrize("env,msg", [
    (dict(PADDLE_TRAINERS_NUM="2", TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID="0"), "PADDLE_PSERVERS_IP_PORT_LIST is not set"),
    (ps_env(PADDLE_PSERVERS_IP_PORT_LIST="127.0.0.1", TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0), "PADDLE_PSERVERS_IP_PORT_LIST"),
    (ps_env(PADDLE_PSERVERS_IP_PORT_LIST="127.0.0.1:1,127.0.0.1:1", TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0), "more than once"),
    (ps_env(PADDLE_TRAINERS_NUM="two", TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0), "PADDLE_TRAINERS_NUM must be an integer"),
    (ps_env(PADDLE_TRAINERS_NUM="0", TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0), "PADDLE_TRAINERS_NUM must be >= 1"),
    (ps_env(), "TRAINING_ROLE is not set"),
    (ps_env(TRAINING_ROLE="WORKER"), "TRAINING_ROLE must be TRAINER or PSERVER, got 'WORKER'"),
    (ps_env(TRAINING_ROLE="TRAINER"), "PADDLE_TRAINER_ID is not set"),
    (ps_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=2), "PADDLE_TRAINER_ID=2 is out of range for 2 trainers"),
    (ps_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=-1), "PADDLE_TRAINER_ID must be >= 0"),
    (ps_env(TRAINING_ROLE="PSERVER", PADDLE_PORT=6170), "POD_IP is not set"),
    (ps_env(TRAINING_ROLE="PSERVER", POD_IP="127.0.0.1"), "PADDLE_PORT is not set"),
    (ps_env(TRAINING_ROLE="PSERVER", POD_IP="127.0.0.1", PADDLE_PORT=7000), "127.0.0.1:7000, which is not in"),
    (ps_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0, PADDLE_TRAINER_ENDPOINTS="127.0.0.1:1"),
     "PADDLE_TRAINERS_NUM=2 but PADDLE_TRAINER_ENDPOINTS lists 1"),
])
def test_paddlecloud_ps_malformed(env, msg):
    with pytest.raises(ClusterEnvError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        resolve_cluster(env, is_collective=False)


def test_paddlecloud_role_maker_reads_os_environ(monkeypatch):
    for k, v in ps_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0).items():
        monkeypatch.setenv(k, v)
    r = rm.PaddleCloudRoleMaker()
    assert r.is_worker() and r.is_first_worker() and r.worker_num() == 2 and r.server_num() == 2
    assert r.get_pserver_endpoints() == SERVERS.split(",")


def test_general_role_maker_contract(monkeypatch):
    env = {"PADDLE_PSERVERS_IP_PORT_LIST": SERVERS, "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:7000,127.0.0.1:7001",
           "TRAINING_ROLE": "PSERVER", "PADDLE_PSERVER_ID": "1"}
    spec = resolve_general(env)
    assert (spec.role, spec.current_id, spec.worker_num) == (SERVER, 1, 2)
    spec = resolve_general(dict(env, TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID="1"))
    assert spec.current_endpoint == "127.0.0.1:7001"
    with pytest.raises(ClusterEnvError, match="PADDLE_PSERVER_ID=5 is out of range"):
        resolve_general(dict(env, PADDLE_PSERVER_ID="5"))
    with pytest.raises(ClusterEnvError, match="PADDLE_TRAINER_ENDPOINTS is not set"):
        resolve_general({k: v for k, v in env.items() if k != "PADDLE_TRAINER_ENDPOINTS"})
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    r = rm.GeneralRoleMaker(path="/tmp/unused", init_timeout_seconds=10)
    assert r.is_server() and r.server_index() == 1


def test_user_defined_role_maker():
    r = rm.UserDefinedRoleMaker(current_id=1, role=rm.Role.WORKER, worker_num=3,
                                server_endpoints=["127.0.0.1:6001", "127.0.0.1:6002"])
    assert r.is_worker() and r.worker_index() == 1 and r.worker_num() == 3 and r.server_num() == 2
    s = rm.UserDefinedRoleMaker(current_id=0, role=rm.Role.SERVER, worker_num=3,
                                server_endpoints=["127.0.0.1:6001", "127.0.0.1:6002"])
    assert s.is_server() and s.server_index() == 0 and s.get_current_endpoint() == "127.0.0.1:6001"


@pytest.mark.parametrize("kw,exc,msg", [
    (dict(server_endpoints="127.0.0.1:1"), TypeError, "server_endpoints must be a list"),
    (dict(server_endpoints=[]), ValueError, "must not be empty"),
    (dict(server_endpoints=["127.0.0.1:1", "127.0.0.1:1"]), ValueError, "duplicate"),
    (dict(server_endpoints=[6001]), TypeError, "must be a string"),
    (dict(role=rm.Role.SERVER, server_endpoints=["127.0.0.1"]), ValueError, "ip:port"),
    (dict(role=3), TypeError, "role must be Role.WORKER or Role.SERVER"),
    (dict(current_id="0"), TypeError, "current_id must be an int"),
    (dict(current_id=-1), ValueError, "current_id must be >= 0"),
    (dict(worker_num=0), ValueError, "worker_num must be > 0"),
    (dict(worker_num=2.0), TypeError, "worker_num must be an int"),
    (dict(role=rm.Role.SERVER, current_id=1), ValueError, "SERVER's current_id must be < len"),
    (dict(current_id=2, worker_num=2), ValueError, "WORKER's current_id must be < worker_num"),
])
def test_user_defined_role_maker_rejects(kw, exc, msg):
    args = dict(current_id=0, role=rm.Role.WORKER, worker_num=2, server_endpoints=["127.0.0.1:6001"])
    args.update(kw)
    with pytest.raises(exc, match=msg):
        rm.UserDefinedRoleMaker(**args)


def test_worker_server_endpoints_checked_where_used():
    """Paddle accepts a worker's server list as given (scripts that never transpile pass ['127.0.0.1']);
    transpiling with it names the bad entry."""
    from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
    r = rm.UserDefinedRoleMaker(current_id=0, role=rm.Role.WORKER, worker_num=1, server_endpoints=["127.0.0.1"])
    assert r.get_pserver_endpoints() == ["127.0.0.1"] and r.worker_num() == 1
    fleet.init(r)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[None, 2], dtype="float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        with pytest.raises(ValueError, match="'127.0.0.1' is not of the form ip:port"):
            fleet.distributed_optimizer(fluid.optimizer.SGD(0.1)).minimize(loss)


def test_mpi_symmetric_resolution_is_pure():
    facts = {"rank": 3, "size": 4, "ips": ["127.0.0.1"] * 4, "ports": [7000, 7001, 7002, 7003], "symmetric": True}
    spec = resolve_cluster({}, is_collective=False, mpi=facts)
    assert (spec.role, spec.current_id, spec.worker_num) == (WORKER, 1, 2)
    assert spec.server_endpoints == ("127.0.0.1:7000", "127.0.0.1:7002")
    assert spec.worker_endpoints == ("127.0.0.1:7001", "127.0.0.1:7003")
    spec0 = resolve_cluster({}, is_collective=False, mpi=dict(facts, rank=2))
    assert (spec0.role, spec0.current_id, spec0.current_endpoint) == (SERVER, 1, "127.0.0.1:7002")
    with pytest.raises(ClusterEnvError, match="even number"):
        resolve_cluster({}, is_collective=False, mpi=dict(facts, size=3, ips=["x"] * 3, ports=[1, 2, 3]))


def test_collective_under_mpirun_env():
    env = {"PMI_RANK": "1", "PMI_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    spec = resolve_cluster(env)
    assert spec.current_id == 1 and spec.worker_endpoints == ("127.0.0.1:29501", "127.0.0.1:29502")
    assert spec.source == "mpirun"
    spec = resolve_cluster({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"},
                           mpi={"ips": ["127.0.0.1"] * 2, "ports": [7100, 7101]})
    assert spec.current_endpoint == "127.0.0.1:7100"
    with pytest.raises(ClusterEnvError, match="MASTER_ADDR and MASTER_PORT"):
        resolve_cluster({"PMI_RANK": "0", "PMI_SIZE": "2"})
    with pytest.raises(ClusterEnvError, match="PMI_RANK=3 is out of range for PMI_SIZE=2"):
        resolve_cluster({"PMI_RANK": "3", "PMI_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"})
