"""An unmodified Fluid 1.x book-style script (`import paddle.fluid as fluid`) as 2 pservers + 2 trainers on
127.0.0.1: sync training equals plain SGD on the two trainers' averaged gradients (computed here in numpy)."""

import json
import os
import sys

import numpy as np
import pytest

from dist_utils import Cluster, base_env, endpoints

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "scripts", "book_fit_a_line.py")
sys.path.insert(0, os.path.join(HERE, "scripts"))
import book_fit_a_line as book  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]


def _expected_losses():
    """Linear regression with SGD(0.1) on mean squared error; each step averages the two trainers' gradients."""
    batches = []
    for t in range(2):
        samples = list(book.housing_like_reader(t)())
        xs = np.array([s[0] for s in samples], np.float64)
        ys = np.array([s[1] for s in samples], np.float64)
        batches.append([(xs[i:i + book.BATCH_SIZE], ys[i:i + book.BATCH_SIZE])
                        for i in range(0, len(xs), book.BATCH_SIZE)])
    w, b = np.full((13, 1), 0.1), np.zeros(1)
    losses = [[], []]
    for step in range(book.STEPS):
        gw, gb = np.zeros_like(w), np.zeros_like(b)
        for t in range(2):
            x, y = batches[t][step]
            err = x.dot(w) + b - y
            losses[t].append(float(np.mean(err ** 2)))
            gw += 2 * x.T.dot(err) / len(x) / 2
            gb += 2 * err.sum(0) / len(x) / 2
        w, b = w - 0.1 * gw, b - 0.1 * gb
    return losses


def test_book_fit_a_line_two_pservers_two_trainers(tmp_path):
    eps = endpoints(2)
    common = dict(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=2, FLAGS_rpc_deadline=20000,
                  TORCH_CPP_LOG_LEVEL="ERROR")
    with Cluster(tmp_path) as c:
        procs = {}
        for i, ep in enumerate(eps):
            procs["ps%d" % i] = c.start("ps%d" % i, [SCRIPT], base_env(PADDLE_TRAINING_ROLE="PSERVER",
                                                                      PADDLE_CURRENT_ENDPOINT=ep, **common))
        for t in range(2):
            procs["tr%d" % t] = c.start("tr%d" % t, [SCRIPT], base_env(PADDLE_TRAINING_ROLE="TRAINER",
                                                                      PADDLE_TRAINER_ID=t, **common))
        rcs = c.wait(200)
        assert all(rc == 0 for rc in rcs.values()), "%s\n%s" % (rcs, c.report())
        got = {}
        for t in range(2):
            out = procs["tr%d" % t].output
            assert "loss " in out   # the script's own '%f' % fetched-loss print worked
            rec = [json.loads(l[len("RESULT "):]) for l in out.splitlines() if l.startswith("RESULT ")]
            assert len(rec) == 1, out
            got[rec[0]["trainer"]] = rec[0]["losses"]
    want = _expected_losses()
    for t in range(2):
        np.testing.assert_allclose(got[t], want[t], rtol=1e-4, atol=1e-6, err_msg="trainer %d" % t)
    assert want[0][-1] < want[0][0]
