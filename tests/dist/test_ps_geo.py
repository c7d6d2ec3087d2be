"""Geo-SGD with real processes on 127.0.0.1: trainers keep their own optimizer and exchange parameter deltas
with 2 pservers every k steps. With one trainer that is local training (the pservers only mirror it); with
two it converges; Fleet's GeoStrategy runs the same way."""

import numpy as np
import pytest

import paddle_compat as fluid
from ps_cluster import run_ok
from test_fleet_ps import run_user_defined

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
    for t, row in run_user_defined(tmp_path, spec).items():
        losses = row["losses"]
        assert np.mean(losses[-5:]) < 0.4 * np.mean(losses[:5]), (t, losses)
