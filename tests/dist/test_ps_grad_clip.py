"""GradientClipByGlobalNorm (set_gradient_clip) in pserver mode, 2 pservers + 2 trainers on 127.0.0.1, as Paddle
1.8.5 trains it: each trainer clips its own gradients by their global norm and sends the clipped ones (the clip
ops stay on the trainer), the pservers average them (sync) or apply them as they come (async); Geo-SGD trainers
clip before their local update. Sync: both trainers' losses and the final parameters equal Paddle 1.8.5's
(tests/data/paddle18/make_ps_clip.py -> ps_clip.json); async and geo (order-dependent): every step runs and the
losses fall."""

import json
import os

import numpy as np
import pytest

from dist_utils import REPO, Cluster, base_env, endpoints

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]
DATA = os.path.join(REPO, "tests", "data", "paddle18")
SCRIPT = os.path.join(DATA, "ps_clip_job.py")
WANT = json.load(open(os.path.join(DATA, "ps_clip.json")))


def run_job(tmp_path, mode):
    eps = endpoints(2)
    common = dict(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), FLAGS_rpc_deadline=60000, CPU_NUM=1,
                  TORCH_CPP_LOG_LEVEL="ERROR")
    with Cluster(tmp_path) as c:
        for ep in eps:
            c.start("ps-" + ep.split(":")[1], [SCRIPT, mode],
                    base_env(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep, **common))
        trs = [c.start("tr%d" % i, [SCRIPT, mode], base_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=i, **common))
               for i in range(2)]
        rcs = c.wait(240)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
        return [json.loads([x for x in tr.output.splitlines() if x.startswith("RESULT ")][-1][7:]) for tr in trs]


@pytest.mark.parity
def test_sync_matches_paddle18(tmp_path):
    for got, want in zip(run_job(tmp_path, "sync"), WANT["sync_job"]):
        np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-4, atol=1e-6)
        for name in want["params"]:
            np.testing.assert_allclose(got["params"][name], want["params"][name], rtol=1e-4, atol=1e-6,
                                       err_msg=name)


@pytest.mark.parametrize("mode", ["async", "geo"])
def test_async_and_geo_train(tmp_path, mode):
    for r in run_job(tmp_path, mode):
        losses = r["losses"]
        assert len(losses) == 4 and np.all(np.isfinite(losses)), losses
        assert losses[-1] < losses[0], losses
