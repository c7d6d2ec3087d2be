"""InMemoryDataset.global_shuffle(fleet) across 2 trainers of a 2-pserver job on 127.0.0.1: every record ends
up on exactly one trainer (none lost, none duplicated), each trainer holds records from both trainers' files,
the fleet-wide sizes are the job's totals, and the shuffled data trains (train_from_dataset, thread=2)."""

import json
import os

import pytest

from dist_utils import Cluster, base_env, endpoints

pytestmark = [pytest.mark.dist, pytest.mark.timeout(240)]
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", "shuffle_node.py")
LINES = 60


def _run_job(tmp_path, **extra):
    """2 pservers + 2 trainers of SCRIPT; each trainer's result (worker<t>.json)."""
    eps = endpoints(2)
    common = dict(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=2, FLAGS_rpc_deadline=30000,
                  RESULT_DIR=str(tmp_path), TORCH_CPP_LOG_LEVEL="ERROR", **extra)
    with Cluster(tmp_path) as c:
        for ep in eps:
            c.start("ps" + ep[-4:], [SCRIPT], base_env(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep, **common))
        for t in range(2):
            c.start("tr%d" % t, [SCRIPT], base_env(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=t, **common))
        rcs = c.wait(200)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
    return [json.load(open(os.path.join(str(tmp_path), "worker%d.json" % t))) for t in range(2)]


def test_global_shuffle_exchanges_records_between_trainers(tmp_path):
    got = _run_job(tmp_path)
    every = sorted(got[0]["tags"] + got[1]["tags"])
    assert every == sorted(w * 1000 + i for w in range(2) for i in range(LINES)), "records lost or duplicated"
    for t in range(2):
        sources = {tag // 1000 for tag in got[t]["tags"]}
        assert sources == {0, 1}, "trainer %d holds records of trainers %s only" % (t, sources)
        assert got[t]["memory_size"] == got[t]["shuffle_size"] == 2 * LINES


def test_global_shuffle_merges_by_lineid_across_trainers(tmp_path):
    """With set_merge_by_lineid(2), the two trainers' records of one ins id meet on one trainer and merge:
    every id ends as exactly one record holding both trainers' slots."""
    got = _run_job(tmp_path, SHUFFLE_MERGE="1")
    pairs = sorted(map(tuple, got[0]["pairs"] + got[1]["pairs"]))
    assert pairs == [(i + 1, 1000 + i) for i in range(LINES)], "ids lost, duplicated or not merged"
    assert got[0]["pairs"] and got[1]["pairs"], "one trainer got every id"
    assert got[0]["memory_size"] == got[1]["memory_size"] == LINES
