"""The transpiled programs carry the whole job (their ops' TrainerPlan / PserverPlan attributes): 2 pservers
and 2 trainers on 127.0.0.1 each write their transpiled programs to files (Paddle's ProgramDesc bytes, or
program JSON), read them back and train from the programs read back. Sync losses equal one process averaging
the two trainers' gradients, as for the programs kept in memory."""

import numpy as np
import pytest

import paddle_compat as fluid
from ps_cluster import local_losses, run_ok

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]

SYNC = [
    {"model": "mlp", "opt": "adam", "slice": True, "split": "rr", "steps": 4, "via": "desc"},
    {"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "lr_decay": True, "steps": 4, "via": "json"},
    {"model": "emb", "opt": "sgd", "lr": 0.5, "slice": True, "split": "rr", "steps": 4, "via": "desc"},
]
ASYNC = {"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 20, "sync": False, "via": "desc"}


def test_job_runs_from_programs_read_back(tmp_path):
    got = run_ok(tmp_path, SYNC + [ASYNC], extra_env={"PS_NODE_TMP": str(tmp_path)})
    for j, spec in enumerate(SYNC):
        want = local_losses(fluid, spec)
        for t in range(2):
            np.testing.assert_allclose(got[(j, t)], want[t], rtol=0, atol=1e-5, err_msg="job %d %s trainer %d"
                                       % (j, spec, t))
    for t in range(2):
        losses = got[(len(SYNC), t)]
        assert len(losses) == 20 and np.mean(losses[-5:]) < np.mean(losses[:5]), losses
