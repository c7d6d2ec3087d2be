"""train_from_dataset on a pserver trainer program: 1 pserver + 1 trainer on 127.0.0.1, sync mode, the
MultiSlot files and fixed-weight model of dataset_train.json; the losses equal Paddle 1.8.5's local run."""

import json
import os

import numpy as np
import pytest

from dist_utils import Cluster, base_env, endpoints

pytestmark = [pytest.mark.dist, pytest.mark.timeout(200)]
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "scripts", "dataset_node.py")
REF = json.load(open(os.path.join(HERE, "..", "data", "paddle18", "dataset_train.json")))


def test_train_from_dataset_on_pserver_trainer_program(tmp_path):
    ep = endpoints(1)[0]
    common = dict(PADDLE_PSERVERS_IP_PORT_LIST=ep, PADDLE_TRAINERS_NUM=1, FLAGS_rpc_deadline=20000,
                  DATA_DIR=str(tmp_path), TORCH_CPP_LOG_LEVEL="ERROR")
    with Cluster(tmp_path) as c:
        c.start("ps", [SCRIPT], base_env(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep, **common))
        tr = c.start("tr", [SCRIPT], base_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0, **common))
        rcs = c.wait(150)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
        line = [x for x in tr.output.splitlines() if x.startswith("RESULT ")][-1]
    got = json.loads(line[len("RESULT "):])
    assert len(got) == 10
    np.testing.assert_allclose(got, REF["losses"], rtol=1e-4)
