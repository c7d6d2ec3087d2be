"""The job key: one secret shared by every process of a job, which authenticates every connection between
them (backends/wire/auth.py). Standard library only: launchers, role makers and the transport all resolve
it through `resolve_key()`.

Where the key comes from, first match wins:
  PADDLE_COMPAT_JOB_TOKEN       the key itself (visible in /proc/<pid>/environ to processes of the same user)
  PADDLE_COMPAT_JOB_TOKEN_FILE  a file holding it; refused if group or others may read it
  PADDLE_COMPAT_INSECURE_NO_KEY=1   no key: anyone who reaches a port may join (warned once per process)
  ~/.paddle_compat/job_token    the per-user key file, created 0600 with a random key on first use, so the
                                hand-started jobs of one user on one host (or hosts sharing a home) agree
Our launchers (distributed/launch.py, launch_ps.py, examples/cluster_demo.py) write a fresh key per job into
a 0600 file, hand its path to their children in PADDLE_COMPAT_JOB_TOKEN_FILE and delete it at the end.
"""

import hashlib
import logging
import os
import secrets
import shutil
import stat
import tempfile
import threading

__all__ = ["TOKEN_ENV", "TOKEN_FILE_ENV", "NO_KEY_ENV", "KeyConfigError", "resolve_key", "user_key_file",
           "JobKeyFile", "key_help"]

TOKEN_ENV = "PADDLE_COMPAT_JOB_TOKEN"
TOKEN_FILE_ENV = "PADDLE_COMPAT_JOB_TOKEN_FILE"
NO_KEY_ENV = "PADDLE_COMPAT_INSECURE_NO_KEY"

_LOG = logging.getLogger("paddle_compat.wire")
_warned = []
_lock = threading.Lock()


class KeyConfigError(RuntimeError):
    """The job key cannot be read (a key file with loose permissions, empty, unreadable)."""


def key_help():
    return ("set the same key in every process of the job: %s=<secret>, or %s=<a file only you can read>; hand-"
            "started jobs of one user share ~/.paddle_compat/job_token by default" % (TOKEN_ENV, TOKEN_FILE_ENV))


def user_key_file():
    return os.path.join(os.path.expanduser("~"), ".paddle_compat", "job_token")


def _read_private(path, what):
    try:
        st = os.stat(path)
    except OSError as e:
        raise KeyConfigError("%s: cannot read the job key file %s: %s" % (what, path, e.strerror)) from None
    if st.st_mode & 0o077:
        raise KeyConfigError("%s: the job key file %s may be read by group or others (mode %04o); a key others can "
                             "read authenticates nothing: chmod 600 %s"
                             % (what, path, stat.S_IMODE(st.st_mode), path))
    with open(path, "r") as f:
        token = f.read().strip()
    if not token:
        raise KeyConfigError("%s: the job key file %s is empty" % (what, path))
    return token


def _user_token():
    path = user_key_file()
    if not os.path.exists(path):
        d = os.path.dirname(path)
        os.makedirs(d, mode=0o700, exist_ok=True)
        # atomically: a complete 0600 file appears under its name, or another process's does
        fd, tmp = tempfile.mkstemp(prefix=".job_token.", dir=d)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, (secrets.token_hex(32) + "\n").encode())
            os.fsync(fd)
            os.close(fd)
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    return _read_private(path, "the per-user key file")


def resolve_key(env=None):
    """(key bytes, where it came from). The key is derived from the token; b"" means no key (opted out)."""
    env = os.environ if env is None else env
    token = env.get(TOKEN_ENV, "")
    if token:
        source = TOKEN_ENV
    elif env.get(TOKEN_FILE_ENV):
        path = env[TOKEN_FILE_ENV]
        token, source = _read_private(path, TOKEN_FILE_ENV), "%s=%s" % (TOKEN_FILE_ENV, path)
    elif env.get(NO_KEY_ENV, "").strip().lower() in ("1", "true", "yes", "on"):
        with _lock:
            if not _warned:
                _warned.append(True)
                _LOG.warning("WARNING: %s=1: this process's job runs WITHOUT a key. Messages still cannot run code, "
                             "but anyone who can reach its ports can join it and push gradients. Unset it to use "
                             "the per-user key file, or %s", NO_KEY_ENV, key_help())
        return b"", NO_KEY_ENV + "=1 (no key)"
    else:
        token, source = _user_token(), "the per-user key file %s" % user_key_file()
    return hashlib.sha256(b"paddle_compat job key\0" + token.encode()).digest(), source


class JobKeyFile:
    """A fresh per-job key in a 0600 file inside a 0700 directory (a launcher's); `env(base)` hands it to the
    children; `remove()` (or leaving the `with`) deletes it."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="paddle_compat_job_")
        self.path = os.path.join(self.dir, "job_token")
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")

    def env(self, base):
        e = dict(base)
        e.pop(TOKEN_ENV, None)
        e[TOKEN_FILE_ENV] = self.path
        return e

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def user_gave_key(env):
    """The user chose the key (or its absence) themselves: launchers then pass it on unchanged."""
    return bool(env.get(TOKEN_ENV) or env.get(TOKEN_FILE_ENV) or env.get(NO_KEY_ENV))
