"""A pserver refuses a non-finite gradient: trainer 0 feeds NaN at step 3 of an async job, the pservers refuse
that push (the trainer's error names itself and the variable), apply nothing of it, and training goes on:
every later loss equals that of the same job skipping step 3 (one async trainer: deterministic), so no
parameter was touched by the NaN push."""

import re

import numpy as np
import pytest

from dist_utils import Cluster
from ps_cluster import records, start

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]


def test_nan_push_is_refused_and_changes_nothing(tmp_path):
    base = {"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "sync": False, "steps": 8}
    with Cluster(tmp_path) as c:
        _, procs = start(c, [dict(base, nan_at=3), dict(base, skip_at=3)], trainers=1)
        rcs = c.wait(200)
        report = c.report()
    assert all(rc == 0 for rc in rcs.values()), report
    got = records(procs)
    refused, skipped = got[(0, 0)]["losses"], got[(1, 0)]["losses"]
    assert len(refused) == len(skipped) == 7 and np.isfinite(refused).all(), (refused, skipped)
    np.testing.assert_allclose(refused, skipped, rtol=0, atol=1e-6)
    out = procs["tr0"].output
    line = [l for l in out.splitlines() if l.startswith("REFUSED ")]
    assert len(line) == 1, out
    assert re.search(r"pserver 127\.0\.0\.1:\d+ refused the push of trainer 0: its gradient 'fc_0\.[wb]_0@GRAD\S*' "
                     r"holds NaN \(non-finite\); nothing of this push was applied", line[0]), line[0]
