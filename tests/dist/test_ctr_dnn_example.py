"""examples/ctr_dnn, the PaddleRec-style CTR-DNN script, run as a user runs it: make_data.py writes small
synthetic Criteo-like files with a known signal, train.py trains through its MultiSlotDataGenerator pipe
script and train_from_dataset(thread=2), locally and as 2 pservers + 2 trainers (async Fleet) under
`python -m paddle_compat.distributed.launch_ps`. Both must reach the AUC threshold justified by the data
(run_jobs.auc_threshold), which real Paddle 1.8.5 reached with the same script and data
(tests/data/paddle18/ctr_dnn.json)."""

import json
import os
import sys

import pytest

from dist_utils import REPO

pytestmark = [pytest.mark.dist, pytest.mark.timeout(400)]
sys.path.insert(0, os.path.join(REPO, "examples", "ctr_dnn"))
import run_jobs  # noqa: E402

PADDLE = json.load(open(os.path.join(REPO, "tests", "data", "paddle18", "ctr_dnn.json")))["small"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("ctr") / "data")
    info = run_jobs.make_data(sys.executable, d, run_jobs.SMALL)
    assert info == PADDLE["data_info"], "make_data.py no longer writes the data Paddle 1.8.5 was run on"
    return d, info


def _final_auc(run):
    return [r["epochs"][-1]["test_auc"] for r in run["results"] if r["epochs"][-1]["test_auc"] is not None]


def test_paddle18_reached_the_threshold():
    thr = run_jobs.auc_threshold(PADDLE["data_info"])
    assert 0.67 < thr < 0.69
    assert min(_final_auc(PADDLE["local"]) + _final_auc(PADDLE["job_2x2_async"])) >= thr


def test_ctr_dnn_local(data):
    d, info = data
    run = run_jobs.run_local(sys.executable, d, timeout=300)
    auc, = _final_auc(run)
    assert auc >= run_jobs.auc_threshold(info), run
    assert abs(auc - _final_auc(PADDLE["local"])[0]) < 0.04, (auc, PADDLE["local"])


def test_ctr_dnn_2x2_async_launch_ps(data, tmp_path):
    d, info = data
    run = run_jobs.run_job(sys.executable, "paddle_compat.distributed.launch_ps", d, str(tmp_path / "log"),
                           timeout=300)
    assert [r["trainer_id"] for r in run["results"]] == [0, 1]
    assert all(r["samples_per_epoch"] == 8000 and len(r["epochs"]) == 2 for r in run["results"])
    auc, = _final_auc(run)          # trainer 0 evaluates the saved model
    assert auc >= run_jobs.auc_threshold(info), run
