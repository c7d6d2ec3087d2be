"""Geo-SGD with real processes on 127.0.0.1: trainers keep their own optimizer and exchange parameter deltas
with 2 pservers every k steps. With one trainer that is local training (the pservers only mirror it); with
two it converges; Fleet's GeoStrategy runs the same way."""

import json

import numpy as np
import pytest

import paddle_compat as fluid
from dist_utils import Cluster, base_env, endpoints
from ps_cluster import run_ok
from test_fleet_ps import SCRIPT as FLEET_SCRIPT, _results

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]


def _local(spec):
    """One process training the spec's model on trainer 0's batches."""
    import ps_node
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = ps_node.build_model(spec)[0]
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(startup)
        return [float(exe.run(main, feed=ps_node.feed(spec, 0, s, 1), fetch_list=[loss])[0][0])
                for s in range(spec["steps"])]


def test_one_trainer_geo_is_local_training(tmp_path):
    jobs = [{"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 7, "sync": False, "geo": 3},
            {"model": "mlp", "opt": "adam", "slice": True, "steps": 5, "sync": False, "geo": 2}]
    got = run_ok(tmp_path, jobs, trainers=1)
    for j, spec in enumerate(jobs):
        want = _local(spec)
        # param = old + (param - old) after each exchange: equal up to float rounding
        np.testing.assert_allclose(got[(j, 0)], want, rtol=0, atol=1e-5, err_msg=str(spec))


def test_two_trainers_geo_converge(tmp_path):
    spec = {"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 30, "sync": False, "geo": 2}
    got = run_ok(tmp_path, [spec])
    for t in range(2):
        losses = got[(0, t)]
        assert len(losses) == 30 and np.mean(losses[-5:]) < 0.4 * np.mean(losses[:5]), (t, losses)


def test_fleet_geo_strategy(tmp_path):
    spec = {"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 30, "strategy": "geo", "geo": 3}
    eps = endpoints(2)
    common = dict(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=2, FLAGS_rpc_deadline=20000,
                  RESULT_DIR=str(tmp_path), TORCH_CPP_LOG_LEVEL="ERROR")
    with Cluster(tmp_path) as c:
        for i, ep in enumerate(eps):
            c.start("ps%d" % i, [FLEET_SCRIPT, "userdefined", json.dumps(spec)],
                    base_env(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep, **common))
        for t in range(2):
            c.start("tr%d" % t, [FLEET_SCRIPT, "userdefined", json.dumps(spec)],
                    base_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=t, **common))
        rcs = c.wait(150)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
    for t, losses in _results(tmp_path).items():
        assert np.mean(losses[-5:]) < 0.4 * np.mean(losses[:5]), (t, losses)
