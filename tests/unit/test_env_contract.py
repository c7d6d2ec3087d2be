"""The environment contract (Paddle's launcher variables) is named once, in backends/cluster.py: what the
launchers hand their children resolves, through the role makers' resolver, to the process meant."""

import ast
import os

from paddle_compat.backends import cluster

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMES = {cluster.TRAINER_ID_ENV, cluster.TRAINERS_NUM_ENV, cluster.TRAINER_ENDPOINTS_ENV, cluster.CURRENT_ENDPOINT_ENV,
         cluster.PSERVERS_ENV, cluster.PSERVER_ID_ENV, cluster.PORT_ENV, cluster.POD_IP_ENV, cluster.ROLE_ENV,
         cluster.PADDLE_ROLE_ENV}
USERS = ["paddle_compat/distributed/launch.py", "paddle_compat/distributed/launch_ps.py",
         "paddle_compat/fluid/incubate/fleet/base/role_maker.py", "paddle_compat/backends/ps/layer_client.py",
         "paddle_compat/fluid/contrib/reader/distributed_reader.py", "examples/cluster_demo.py"]
EPS = ["127.0.0.1:6170", "127.0.0.1:6171"]


def test_launchers_and_role_makers_do_not_spell_the_names():
    for rel in USERS:
        with open(os.path.join(REPO, rel)) as f:
            tree = ast.parse(f.read())
        spelled = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in NAMES]
        assert not spelled, "%s spells %s: use backends/cluster.py's names" % (rel, spelled)


def test_what_a_ps_launcher_sets_resolves_to_each_process():
    for i, ep in enumerate(EPS):
        spec = cluster.resolve_cluster(cluster.pserver_env(EPS, i, 3), is_collective=False)
        assert (spec.role, spec.current_id, spec.current_endpoint, spec.worker_num) == (cluster.SERVER, i, ep, 3)
        assert spec.server_endpoints == tuple(EPS)
    for t in range(3):
        env = cluster.ps_trainer_env(EPS, t, 3, pod_ip="127.0.0.1")
        spec = cluster.resolve_cluster(env, is_collective=False)
        assert (spec.role, spec.current_id, spec.worker_num) == (cluster.WORKER, t, 3)
        assert cluster.role_of(env) == "TRAINER"


def test_what_a_collective_launcher_sets_resolves_to_each_trainer():
    for r, ep in enumerate(EPS):
        spec = cluster.resolve_cluster(cluster.collective_trainer_env(r, EPS), is_collective=True)
        assert (spec.role, spec.current_id, spec.current_endpoint) == (cluster.WORKER, r, ep)
        assert spec.worker_endpoints == tuple(EPS)
    assert cluster.role_of({}) is None and cluster.role_of({"TRAINING_ROLE": "pserver"}) == "PSERVER"
