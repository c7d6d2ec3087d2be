"""Where a process's job key comes from (backends/job_env.py): the token, a private key file (a loose one is
refused, saying how to fix it), the explicit opt-out (warned), else the per-user key file, created 0600 once
and shared by every process of the user; and the launchers' per-job key file."""

import logging
import os
import stat
import subprocess
import sys

import pytest

from dist_utils import base_env
from paddle_compat.backends import job_env


def _env(**kw):
    return {k: str(v) for k, v in kw.items()}


def test_token_value_and_token_file(tmp_path):
    k1, src = job_env.resolve_key(_env(PADDLE_COMPAT_JOB_TOKEN="s3cret"))
    assert len(k1) == 32 and src == "PADDLE_COMPAT_JOB_TOKEN"
    f = tmp_path / "tok"
    f.write_text("s3cret\n")
    os.chmod(f, 0o600)
    k2, src = job_env.resolve_key(_env(PADDLE_COMPAT_JOB_TOKEN_FILE=f))
    assert k2 == k1 and str(f) in src
    assert job_env.resolve_key(_env(PADDLE_COMPAT_JOB_TOKEN="other"))[0] != k1


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_key_file_others_can_read_is_refused(tmp_path, mode):
    f = tmp_path / "tok"
    f.write_text("s3cret")
    os.chmod(f, mode)
    with pytest.raises(job_env.KeyConfigError, match=r"may be read by group or others \(mode %04o\).*chmod 600 %s"
                       % (mode, f)):
        job_env.resolve_key(_env(PADDLE_COMPAT_JOB_TOKEN_FILE=f))


def test_missing_and_empty_key_files_are_named(tmp_path):
    with pytest.raises(job_env.KeyConfigError, match="cannot read the job key file .*nope"):
        job_env.resolve_key(_env(PADDLE_COMPAT_JOB_TOKEN_FILE=tmp_path / "nope"))
    f = tmp_path / "empty"
    f.write_text("\n")
    os.chmod(f, 0o600)
    with pytest.raises(job_env.KeyConfigError, match="is empty"):
        job_env.resolve_key(_env(PADDLE_COMPAT_JOB_TOKEN_FILE=f))


def test_per_user_key_file_is_created_private_once_and_shared(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / ".paddle_compat" / "job_token"
    # several processes at once: one file, one key, every process agrees
    code = "from paddle_compat.backends import job_env; print(job_env.resolve_key({})[0].hex())"
    procs = [subprocess.Popen([sys.executable, "-c", code], env=base_env(HOME=str(tmp_path)), stdout=subprocess.PIPE,
                              text=True) for _ in range(4)]
    keys = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert len(keys) == 1 and len(keys.pop()) == 64
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert os.listdir(path.parent) == ["job_token"]            # no temporary file left behind
    k, src = job_env.resolve_key({})
    assert "per-user key file" in src and str(path) in src
    os.chmod(path, 0o644)
    with pytest.raises(job_env.KeyConfigError, match="chmod 600"):
        job_env.resolve_key({})


def test_opting_out_warns_once(caplog, monkeypatch):
    monkeypatch.setattr(job_env, "_warned", [])
    with caplog.at_level(logging.WARNING, logger="paddle_compat.wire"):
        assert job_env.resolve_key(_env(PADDLE_COMPAT_INSECURE_NO_KEY=1))[0] == b""
        assert job_env.resolve_key(_env(PADDLE_COMPAT_INSECURE_NO_KEY=1))[0] == b""
    warned = [r for r in caplog.records if "WITHOUT a key" in r.getMessage()]
    assert len(warned) == 1 and "push gradients" in warned[0].getMessage()
    # a key given explicitly wins over the opt-out
    assert job_env.resolve_key(_env(PADDLE_COMPAT_INSECURE_NO_KEY=1, PADDLE_COMPAT_JOB_TOKEN="x"))[0] != b""


def test_launchers_job_key_file(tmp_path):
    with job_env.JobKeyFile() as kf:
        assert stat.S_IMODE(os.stat(kf.path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(kf.dir).st_mode) == 0o700
        env = kf.env({"PADDLE_COMPAT_JOB_TOKEN": "stale", "X": "1"})
        assert env == {"PADDLE_COMPAT_JOB_TOKEN_FILE": kf.path, "X": "1"}
        assert job_env.resolve_key(env)[0] != job_env.resolve_key({"PADDLE_COMPAT_JOB_TOKEN": "stale"})[0]
    assert not os.path.exists(kf.dir)
