"""train_from_dataset(thread=2) on async pserver trainers: 1 pserver + 2 trainers on 127.0.0.1, each trainer
running two Hogwild threads that send gradients and receive parameters per step; every batch runs once and
both trainers' losses fall."""

import json
import os

import numpy as np
import pytest

from dist_utils import Cluster, base_env, endpoints

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "scripts", "dataset_hogwild_node.py")


def test_async_trainers_run_hogwild_threads(tmp_path):
    ep = endpoints(1)[0]
    common = dict(PADDLE_PSERVERS_IP_PORT_LIST=ep, PADDLE_TRAINERS_NUM=2, FLAGS_rpc_deadline=60000,
                  DATA_DIR=str(tmp_path), TORCH_CPP_LOG_LEVEL="ERROR", THREADS=2)
    with Cluster(tmp_path) as c:
        c.start("ps", [SCRIPT], base_env(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep, **common))
        trs = [c.start("tr%d" % i, [SCRIPT], base_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=i, **common))
               for i in range(2)]
        rcs = c.wait(240)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
        results = [json.loads([x for x in tr.output.splitlines() if x.startswith("RESULT ")][-1][7:])
                   for tr in trs]
    for r in results:
        pe, got = r["per_epoch"], r["losses"]
        assert r["workers"] == [0, 1]
        # thread 0 prints its own batches (as Paddle 1.8): half of each epoch's
        assert len(got) == 5 * pe // 2
        first, last = np.mean(got[:pe // 2]), np.mean(got[-(pe // 2):])
        print("losses first epoch %.4f, last %.4f" % (first, last))
        assert last < 0.75 * first, (first, last)
