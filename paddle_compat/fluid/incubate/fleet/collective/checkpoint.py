"""fleet (collective) checkpoints, as Paddle 1.8's save_check_point / load_check_point lay them out:

    <path>/__paddle_fleet_checkpoint__.<n>/_paddle_fleet_param__   every persistable, one combined file
                                          /fleet_train_status       {"epoch_no": <completed epoch>}

n counts up from 0 with each save; the highest n is the checkpoint loaded. On a local file system a save
is staged in a directory beside its target and switched in only when complete (backends/checkpoint_dir.py,
with its manifest), so a process killed mid-save leaves the previous checkpoints as they were, and a
staging directory (its name has a third dot-separated part) is never taken for a checkpoint. On a file
system that needs uploads (BDFS), the save is written to a local cache, uploaded under a temporary name
and then moved to its number, as Paddle does.

Where we differ from Paddle: only the first worker writes (Paddle had every worker write the same
directory); remain_all_checkpoint=False cleans on the file system the save went to (Paddle cleaned the
local one whatever `fs` was).
"""

import json
import os
import shutil

from .... import io
from ....executor.executor import Executor
from .....ir.tensor_format import atomic_write
from .....distributed.fs_wrapper import LocalFS
from .....backends.checkpoint_dir import Staging, file_record, test_pause

__all__ = ["TrainStatus", "PREFIX", "PARAM_FILE", "STATUS_FILE"]

PREFIX = "__paddle_fleet_checkpoint__"
PARAM_FILE = "_paddle_fleet_param__"
STATUS_FILE = "fleet_train_status"


class TrainStatus:
    """What a checkpoint records of the training loop: the last completed epoch (-1: none)."""

    def __init__(self, epoch_no=-1):
        self._epoch_no = epoch_no

    def next(self):
        return self._epoch_no + 1

    def __eq__(self, other):
        return isinstance(other, TrainStatus) and self._epoch_no == other._epoch_no

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._epoch_no)

    def __repr__(self):
        return "TrainStatus(epoch_no=%d)" % self._epoch_no


def _fs(fs):
    if fs is None:
        return LocalFS()
    return fs


def checkpoint_numbers(root_path, fs=None):
    """The numbers of the checkpoints directly under root_path."""
    out = []
    for d in _fs(fs).list_dirs(root_path):
        parts = d.split(".")
        if len(parts) == 2 and parts[0] == PREFIX:
            try:
                out.append(int(parts[1]))
            except ValueError:
                continue
    return sorted(out)


def last_checkpoint_no(root_path, fs=None):
    nums = checkpoint_numbers(root_path, fs)
    return nums[-1] if nums else -1


def _join(root, n):
    return "%s/%s.%d" % (root.rstrip("/") or "/", PREFIX, n)


def _write_into(executor, program, dirname, train_status):
    """The checkpoint's files in dirname; returns the names written."""
    names = []
    if any(io.is_persistable(v) for v in program.list_vars()):
        io.save_persistables(executor, dirname, program, filename=PARAM_FILE)
        names.append(PARAM_FILE)
    data = json.dumps({"epoch_no": int(train_status._epoch_no)}).encode()
    atomic_write(os.path.join(dirname, STATUS_FILE), lambda f: f.write(data))
    names.append(STATUS_FILE)
    return names


def save(fleet, executor, path, train_status, main_program=None, fs=None, local_cache_path=".cache",
         remain_all_checkpoint=True):
    if not isinstance(train_status, TrainStatus):
        raise TypeError("fleet.save_check_point: train_status must be a TrainStatus, got %s"
                        % type(train_status).__name__)
    program = fleet._program_to_save(executor, main_program, "save_check_point")
    if not fleet.is_first_worker():
        return None
    fs = _fs(fs)
    if not fs.stat(path):
        fs.mkdir(path)
    n = last_checkpoint_no(path, fs) + 1
    real = _join(path, n)
    if fs.need_upload_download():
        cache = os.path.join(local_cache_path, "%s.%d.saved_cache" % (PREFIX, n))
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        _write_into(executor, program, cache, train_status)
        tmp = real + ".tmp"
        fs.delete(tmp)
        fs.upload(cache, tmp)
        fs.mv(tmp, real)
        shutil.rmtree(cache, ignore_errors=True)
    else:
        has_params = any(io.is_persistable(v) for v in program.list_vars())
        parts = {STATUS_FILE: "fleet worker 0"}
        if has_params:
            parts[PARAM_FILE] = "fleet worker 0"
        staging = Staging(real, parts)
        names = _write_into(executor, program, staging.path, train_status)
        test_pause("fleet-checkpoint-written")      # (tests kill the process here: files written, not switched in)
        staging.commit({nm: file_record(os.path.join(staging.path, nm), [], "bytes", "fleet worker 0")
                        for nm in names})
    if not remain_all_checkpoint:
        clean(path, fs)
    return real


def load(fleet, executor, path, trainer_id, main_program=None, fs=None, local_cache_path=".cache",
         ignore_empty=True):
    """The TrainStatus of the newest checkpoint under path, its persistables loaded; None if there is none
    (ValueError with ignore_empty=False)."""
    if not isinstance(executor, Executor):
        raise TypeError("fleet.load_check_point: executor must be a fluid.Executor, got %s"
                        % type(executor).__name__)
    fs = _fs(fs)
    n = last_checkpoint_no(path, fs)
    if n < 0:
        if not ignore_empty:
            raise ValueError("fleet.load_check_point: no checkpoint (%s.<n>) under %s" % (PREFIX, path))
        return None
    real = _join(path, n)
    load_path = real
    if fs.need_upload_download():
        cache = os.path.join(local_cache_path, "%s.%d.load_cache.%d" % (PREFIX, n, int(trainer_id)))
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        fs.download(real, cache)
        load_path = os.path.join(cache, os.path.basename(real))
    program = fleet._program_to_save(executor, main_program, "load_check_point")
    if os.path.exists(os.path.join(load_path, PARAM_FILE)) or any(io.is_persistable(v) for v in program.list_vars()):
        io.load_persistables(executor, load_path, program, filename=PARAM_FILE)
    status_file = os.path.join(load_path, STATUS_FILE)
    status = TrainStatus()
    if os.path.isfile(status_file):
        with open(status_file) as f:
            d = json.load(f)
        if not isinstance(d.get("epoch_no"), int) or d["epoch_no"] < 0:
            raise ValueError("fleet.load_check_point: %s holds no valid epoch_no: %r" % (status_file, d))
        status._epoch_no = d["epoch_no"]
    return status


def clean(root_path, fs=None, checkpoint_num=1):
    """Remove all but the newest checkpoint_num checkpoints under root_path."""
    fs = _fs(fs)
    nums = checkpoint_numbers(root_path, fs)
    if not nums:
        return
    keep = max(int(checkpoint_num), 1)
    for n in nums:
        if n <= nums[-1] - keep:
            fs.delete(_join(root_path, n))
