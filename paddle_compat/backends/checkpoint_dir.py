"""Crash-safe checkpoint directories: a save is written into a new directory beside the target and switched
in only once every part of it is on disk, so a process killed mid-save leaves the previous checkpoint intact.

    <dirname>.tmp-<pid>-<rand>/           the save in progress (any process may be killed while it exists)
        __checkpoint_in_progress__.json   written first: the parts the save will write, and who writes each
        <var>, <table>.block<i>, ...      Paddle's tensor format, one file per variable, fsynced
        __checkpoint__.json               written last: every file with its shape, dtype, size, sha256 and
                                          the pserver(s) it came from; its presence means "complete"
    then the staging directory and <dirname> are exchanged in one rename (Linux renameat2 RENAME_EXCHANGE;
    a plain rename when <dirname> does not exist yet) and the old checkpoint is removed.

Without RENAME_EXCHANGE (another OS, or a file system refusing it) the switch is two renames, old ->
`<dirname>.old-<id>` then new -> `<dirname>`; a crash between them leaves no `<dirname>`, and `verify` names
the complete checkpoints left beside it.

Readers: `verify(dirname)` refuses a directory holding the in-progress marker or a manifest whose files are
missing or of the wrong size, naming those parts; a directory with neither (a local save, or one written by
Paddle or an older version of this package) is accepted as it is. `check_sha256` checks a file read
against the manifest.
"""

import ctypes
import errno
import hashlib
import json
import os
import shutil
import time
import uuid
from ..ir.tensor_format import atomic_write

__all__ = ["MANIFEST", "IN_PROGRESS", "IncompleteCheckpoint", "Staging", "verify", "check_sha256",
           "file_record", "test_pause"]

MANIFEST = "__checkpoint__.json"
IN_PROGRESS = "__checkpoint_in_progress__.json"
FORMAT = "paddle_compat checkpoint"
PAUSE_ENV = "PADDLE_COMPAT_TEST_SAVE_PAUSE"


class IncompleteCheckpoint(ValueError):
    """A checkpoint directory whose save did not finish, or whose files do not match its manifest."""


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_record(path, shape, dtype, source):
    """What the manifest says of one written file."""
    return {"shape": [int(d) for d in shape], "dtype": str(dtype), "bytes": os.path.getsize(path),
            "sha256": _sha256(path), "from": source}


def _write_json(path, obj):
    data = json.dumps(obj, indent=1, sort_keys=True).encode()
    atomic_write(path, lambda f: f.write(data))


class Staging:
    """One save into `dirname`: `path` is where its files go; `commit(records)` makes it the checkpoint."""

    def __init__(self, dirname, parts):
        """parts: {file name: who writes it / where its data comes from}, recorded before anything else."""
        self.dirname = os.path.abspath(os.path.normpath(dirname))
        parent = os.path.dirname(self.dirname)
        os.makedirs(parent, exist_ok=True)
        if os.path.exists(self.dirname) and not os.path.isdir(self.dirname):
            raise ValueError("save_persistables: %s exists and is not a directory" % self.dirname)
        self.path = "%s.tmp-%d-%s" % (self.dirname, os.getpid(), uuid.uuid4().hex[:8])
        os.makedirs(self.path)
        self.parts = dict(parts)
        _write_json(os.path.join(self.path, IN_PROGRESS),
                    {"format": FORMAT, "target": self.dirname, "pid": os.getpid(), "started": time.time(),
                     "parts": self.parts})

    def commit(self, records):
        """records: {file name: file_record(...)} for every file written (each already fsynced)."""
        missing = sorted(set(self.parts) - set(records))
        if missing:
            raise IncompleteCheckpoint("save into %s: parts %s were never written" % (self.dirname, missing))
        for name in records:
            if not os.path.isfile(os.path.join(self.path, name)):
                raise IncompleteCheckpoint("save into %s: %s is missing from %s" % (self.dirname, name, self.path))
        _write_json(os.path.join(self.path, MANIFEST),
                    {"format": FORMAT, "version": 1, "saved": time.time(), "files": records})
        os.unlink(os.path.join(self.path, IN_PROGRESS))
        _fsync_dir(self.path)
        _switch(self.path, self.dirname)
        _remove_leftovers(self.dirname)


def _rename_exchange(a, b):
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where that is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, "cannot switch checkpoint %s into place: %s" % (a, os.strerror(err)), b)


def _switch(new, dirname):
    parent = os.path.dirname(dirname)
    if not os.path.lexists(dirname):
        try:
            os.rename(new, dirname)
            _fsync_dir(parent)
            return
        except OSError as e:
            if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
    if _rename_exchange(new, dirname):      # `new` now holds the previous checkpoint
        _fsync_dir(parent)
        shutil.rmtree(new, ignore_errors=True)
        return
    old = "%s.old-%d-%s" % (dirname, os.getpid(), uuid.uuid4().hex[:8])
    os.rename(dirname, old)
    os.rename(new, dirname)
    _fsync_dir(parent)
    shutil.rmtree(old, ignore_errors=True)


def _leftovers(dirname):
    parent, base = os.path.split(dirname)
    try:
        names = os.listdir(parent or ".")
    except OSError:
        return []
    return sorted(os.path.join(parent, n) for n in names
                  if n.startswith(base + ".tmp-") or n.startswith(base + ".old-"))


def _remove_leftovers(dirname):
    """Staging directories of interrupted saves into the same checkpoint (one save into a directory at a
    time: a concurrent save of another job into it would lose its staging directory and fail)."""
    for p in _leftovers(dirname):
        shutil.rmtree(p, ignore_errors=True)


def verify(dirname):
    """The manifest of a complete checkpoint, None for a directory without one (local or older saves);
    IncompleteCheckpoint naming the missing or damaged parts otherwise."""
    dirname = os.path.normpath(dirname)
    if not os.path.isdir(dirname):
        found = [p for p in _leftovers(os.path.abspath(dirname)) if os.path.isfile(os.path.join(p, MANIFEST))]
        if found:
            raise IncompleteCheckpoint(
                "there is no checkpoint directory %s, but complete checkpoint(s) %s beside it: a save was "
                "interrupted while switching directories; rename the newest one to %s"
                % (dirname, ", ".join(found), dirname))
        return None
    marker = os.path.join(dirname, IN_PROGRESS)
    manifest_path = os.path.join(dirname, MANIFEST)
    if os.path.exists(marker) and not os.path.exists(manifest_path):
        with open(marker) as f:
            parts = json.load(f).get("parts", {})
        missing = ["%s (%s)" % (n, src) for n, src in sorted(parts.items())]
        raise IncompleteCheckpoint(
            "%s is an incomplete checkpoint: its save was interrupted before every part was written; parts "
            "not confirmed: %s. Load the previous checkpoint (the directory this save was going to replace)"
            % (dirname, ", ".join(missing) or "all"))
    if not os.path.exists(manifest_path):
        return None
    with open(manifest_path) as f:
        manifest = json.load(f)
    if manifest.get("format") != FORMAT:
        raise IncompleteCheckpoint("%s: %s is not a checkpoint manifest of this package" % (dirname, manifest_path))
    bad = []
    for name, rec in sorted(manifest["files"].items()):
        path = os.path.join(dirname, name)
        if not os.path.isfile(path):
            bad.append("%s (missing; from %s)" % (name, rec.get("from")))
        elif os.path.getsize(path) != rec["bytes"]:
            bad.append("%s (%d bytes, the manifest says %d; from %s)"
                       % (name, os.path.getsize(path), rec["bytes"], rec.get("from")))
    if bad:
        raise IncompleteCheckpoint("%s is an incomplete checkpoint: %s" % (dirname, "; ".join(bad)))
    return manifest


def check_sha256(manifest, dirname, name):
    """A file's checksum against the manifest (no-op without a manifest or an entry for it)."""
    rec = (manifest or {}).get("files", {}).get(name)
    if rec is None:
        return
    got = _sha256(os.path.join(dirname, name))
    if got != rec["sha256"]:
        raise IncompleteCheckpoint("%s in checkpoint %s is damaged: its sha256 differs from the manifest's "
                                   "(written from %s)" % (name, dirname, rec.get("from")))


_pause_counts = {}


def test_pause(point):
    """Test-only hook: with PADDLE_COMPAT_TEST_SAVE_PAUSE=<point>:<n>:<dir>, the n-th time this process
    reaches `point` it writes <dir>/<point>.paused and sleeps (a test then kills it mid-save)."""
    spec = os.environ.get(PAUSE_ENV)
    if not spec:
        return
    want, n, where = spec.split(":", 2)
    if want != point:
        return
    _pause_counts[point] = _pause_counts.get(point, 0) + 1
    if _pause_counts[point] != int(n):
        return
    with open(os.path.join(where, point + ".paused"), "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)
