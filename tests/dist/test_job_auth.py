"""The job key in real processes (backends/job_env.py, backends/wire/auth.py):

- a trainer holding another key, one whose key file others may read, and one that opted out of keys are each
  refused by a live pserver with an error saying what is wrong and how to set the key (the pserver logs each
  refusal with the stranger's socket address); the trainer with the job's key file then trains the job;
- with no key set at all, the processes of one user agree through the per-user key file (created 0600);
- with PADDLE_COMPAT_INSECURE_NO_KEY=1 in every process the job runs, and each process warns that it has no key.
"""

import json
import os
import re
import stat

import pytest

from dist_utils import Cluster, base_env, endpoints
from ps_cluster import SCRIPT, wait_for

pytestmark = [pytest.mark.dist, pytest.mark.timeout(300)]

SPEC = [{"model": "fit_a_line", "opt": "sgd", "lr": 0.05, "steps": 4}]


def _env(eps, extra, **kw):
    env = base_env(PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM=1, FLAGS_rpc_deadline=60000, **kw)
    for k in ("PADDLE_COMPAT_JOB_TOKEN", "PADDLE_COMPAT_JOB_TOKEN_FILE", "PADDLE_COMPAT_INSECURE_NO_KEY"):
        env.pop(k, None)
    env.update(extra)
    return env


def _key_file(path, text, mode):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return str(path)


def _losses(proc):
    return [json.loads(line[7:])["losses"] for line in proc.output.splitlines() if line.startswith("RESULT ")]


def test_wrong_loose_and_missing_keys_are_refused_then_the_right_one_trains(tmp_path):
    good = {"PADDLE_COMPAT_JOB_TOKEN_FILE": _key_file(tmp_path / "key", "s3cret\n", 0o600)}
    bad = {
        "wrong": {"PADDLE_COMPAT_JOB_TOKEN": "not-the-secret"},
        "loose": {"PADDLE_COMPAT_JOB_TOKEN_FILE": _key_file(tmp_path / "loose", "s3cret\n", 0o644)},
        "nokey": {"PADDLE_COMPAT_INSECURE_NO_KEY": "1"},
    }
    eps = endpoints(1)
    with Cluster(tmp_path) as c:
        ps = c.start("ps0", [SCRIPT, json.dumps(SPEC)], _env(eps, good, TRAINING_ROLE="PSERVER",
                                                             PADDLE_CURRENT_ENDPOINT=eps[0]))
        assert wait_for(ps, "DIGEST", 120), c.report()
        strangers = {name: c.start(name, [SCRIPT, json.dumps(SPEC)],
                                   _env(eps, extra, PADDLE_TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=0))
                     for name, extra in bad.items()}
        rcs = c.wait(120, list(strangers.values()))
        assert all(rc != 0 for rc in rcs.values()), c.report()
        tr = c.start("tr0", [SCRIPT, json.dumps(SPEC)], _env(eps, good, PADDLE_TRAINING_ROLE="TRAINER",
                                                             PADDLE_TRAINER_ID=0))
        rcs = c.wait(120, [ps, tr])
        report = c.report()
    assert rcs == {"ps0": 0, "tr0": 0}, report
    assert len(_losses(tr)[0]) == 4
    where = "pserver 0 (%s)" % eps[0]
    wrong = strangers["wrong"].output
    assert "%s refused this process: the job keys differ (this process's key comes from PADDLE_COMPAT_JOB_TOKEN)" \
           % where in wrong and "PADDLE_COMPAT_JOB_TOKEN_FILE=<a file only you can read>" in wrong, report
    loose = strangers["loose"].output
    assert re.search(r"the job key file \S+loose may be read by group or others \(mode 0644\).*chmod 600",
                     loose), report
    nokey = strangers["nokey"].output
    assert "WITHOUT a key" in nokey and "refused this process: the job keys differ (this process's key comes from " \
           "PADDLE_COMPAT_INSECURE_NO_KEY=1 (no key))" in nokey, report
    # the pserver logged the two that reached the handshake, with their socket addresses
    assert len(re.findall(r"%s refused a connection from 127\.0\.0\.1:\d+: bad key: it claims to be trainer 0"
                          % re.escape(where), ps.output)) == 2, ps.output


@pytest.mark.parametrize("mode", ["per-user key file", "opted out"])
def test_jobs_without_a_given_key(tmp_path, mode):
    home = tmp_path / "home"
    home.mkdir()
    extra = {"HOME": str(home)} if mode == "per-user key file" else {"PADDLE_COMPAT_INSECURE_NO_KEY": "1"}
    eps = endpoints(1)
    with Cluster(tmp_path) as c:
        ps = c.start("ps0", [SCRIPT, json.dumps(SPEC)], _env(eps, extra, TRAINING_ROLE="PSERVER",
                                                             PADDLE_CURRENT_ENDPOINT=eps[0]))
        tr = c.start("tr0", [SCRIPT, json.dumps(SPEC)], _env(eps, extra, PADDLE_TRAINING_ROLE="TRAINER",
                                                             PADDLE_TRAINER_ID=0))
        rcs = c.wait(150)
        report = c.report()
    assert rcs == {"ps0": 0, "tr0": 0}, report
    assert len(_losses(tr)[0]) == 4
    if mode == "per-user key file":
        path = home / ".paddle_compat" / "job_token"
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and len(path.read_text().strip()) == 64
        assert "WITHOUT a key" not in ps.output + tr.output
    else:
        assert ps.output.count("WITHOUT a key") == 1 and tr.output.count("WITHOUT a key") == 1, report
