"""fleet (collective) save_check_point / load_check_point / clean_redundant_check_points with TrainStatus,
over paddle.distributed.fs_wrapper's LocalFS and an upload/download file system: Paddle 1.8's layout
(__paddle_fleet_checkpoint__.<n>/_paddle_fleet_param__ + fleet_train_status), numbering, and crash safety
(a save is staged beside its target: an interrupted one is never taken for a checkpoint)."""

import json
import os
import shutil

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.backends.checkpoint_dir import IN_PROGRESS, IncompleteCheckpoint
from paddle_compat.distributed.fs_wrapper import BDFS, FSError, LocalFS
from paddle_compat.fluid.incubate.fleet.base import role_maker
from paddle_compat.fluid.incubate.fleet.collective import Collective, TrainStatus


def _fleet(current_id=0, n=1):
    f = Collective()
    f.init(role_maker.UserDefinedCollectiveRoleMaker(current_id, ["127.0.0.1:%d" % (7000 + i) for i in range(n)]))
    return f


def _model():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[None, 4], dtype="float32")
        y = fluid.layers.fc(x, 3, param_attr=fluid.ParamAttr(name="w"), bias_attr=fluid.ParamAttr(name="b"))
        loss = fluid.layers.mean(y)
        fluid.optimizer.Adam(0.01).minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(startup)
    return main, scope, exe


def _w(scope):
    return np.array(scope.find_var("w").get_tensor()).copy()


def test_train_status():
    s = TrainStatus(2)
    assert s.next() == 3 and s == TrainStatus(2) and s != TrainStatus(1) and TrainStatus().next() == 0


def test_save_load_numbering_and_clean(tmp_path):
    f = _fleet()
    main, scope, exe = _model()
    root = str(tmp_path / "ckpt")
    with fluid.scope_guard(scope):
        w0 = _w(scope)
        assert f.save_check_point(exe, root, TrainStatus(2), main_program=main).endswith(
            "__paddle_fleet_checkpoint__.0")
        assert f._get_last_checkpoint_no(root, fs=LocalFS()) == 0
        d0 = os.path.join(root, "__paddle_fleet_checkpoint__.0")
        assert {"_paddle_fleet_param__", "fleet_train_status"} <= set(os.listdir(d0))
        with open(os.path.join(d0, "fleet_train_status")) as fh:
            assert json.load(fh) == {"epoch_no": 2}
        scope.find_var("w").get_tensor().set(np.zeros_like(w0), fluid.CPUPlace())
        assert f.load_check_point(exe, root, trainer_id=0, main_program=main) == TrainStatus(2)
        np.testing.assert_array_equal(_w(scope), w0)
        f.save_check_point(exe, root, TrainStatus(3), main_program=main)
        f.save_check_point(exe, root, TrainStatus(4), main_program=main)
        assert f._get_last_checkpoint_no(root) == 2
        assert f.load_check_point(exe, root, 0, main_program=main) == TrainStatus(4)
        f.clean_redundant_check_points(root, checkpoint_num=2)
        assert sorted(os.listdir(root)) == ["__paddle_fleet_checkpoint__.1", "__paddle_fleet_checkpoint__.2"]
        f.save_check_point(exe, root, TrainStatus(5), main_program=main, remain_all_checkpoint=False)
        assert os.listdir(root) == ["__paddle_fleet_checkpoint__.3"]


def test_empty_root(tmp_path):
    f = _fleet()
    main, scope, exe = _model()
    assert f.load_check_point(exe, str(tmp_path / "none"), 0, main_program=main) is None
    with pytest.raises(ValueError, match="no checkpoint"):
        f.load_check_point(exe, str(tmp_path / "none"), 0, main_program=main, ignore_empty=False)
    with pytest.raises(TypeError, match="TrainStatus"):
        f.save_check_point(exe, str(tmp_path / "x"), 3, main_program=main)


def test_interrupted_save_is_not_a_checkpoint(tmp_path):
    f = _fleet()
    main, scope, exe = _model()
    root = str(tmp_path / "ckpt")
    with fluid.scope_guard(scope):
        f.save_check_point(exe, root, TrainStatus(1), main_program=main)
        # what a save killed mid-way leaves: its staging directory beside the target
        os.makedirs(os.path.join(root, "__paddle_fleet_checkpoint__.1.tmp-123-abcd"))
        assert f._get_last_checkpoint_no(root) == 0
        assert f.load_check_point(exe, root, 0, main_program=main) == TrainStatus(1)
        f.save_check_point(exe, root, TrainStatus(2), main_program=main)     # takes number 1, cleans leftovers
        assert sorted(os.listdir(root)) == ["__paddle_fleet_checkpoint__.0", "__paddle_fleet_checkpoint__.1"]
        # a directory renamed in by hand while still marked in progress is refused, naming the parts
        bad = os.path.join(root, "__paddle_fleet_checkpoint__.2")
        shutil.copytree(os.path.join(root, "__paddle_fleet_checkpoint__.1"), bad)
        os.unlink(os.path.join(bad, "__checkpoint__.json"))
        with open(os.path.join(bad, IN_PROGRESS), "w") as fh:
            json.dump({"parts": {"_paddle_fleet_param__": "fleet worker 0"}}, fh)
        with pytest.raises(IncompleteCheckpoint, match="_paddle_fleet_param__"):
            f.load_check_point(exe, root, 0, main_program=main)


def test_only_the_first_worker_writes(tmp_path):
    f = _fleet(1, 2)
    main, scope, exe = _model()
    with fluid.scope_guard(scope):
        assert f.save_check_point(exe, str(tmp_path / "c"), TrainStatus(0), main_program=main) is None
    assert not os.path.exists(str(tmp_path / "c"))


class _UploadFS(LocalFS):
    """A 'remote' file system: a local directory reached only through upload/download."""
    calls = []

    def upload(self, local_path, fs_path):
        self.calls.append("upload")
        shutil.copytree(local_path, fs_path)

    def download(self, fs_path, local_path):
        self.calls.append("download")
        shutil.copytree(fs_path, os.path.join(local_path, os.path.basename(fs_path)))

    def need_upload_download(self):
        return True


def test_upload_download_fs(tmp_path):
    f = _fleet()
    main, scope, exe = _model()
    fs, root, cache = _UploadFS(), str(tmp_path / "remote"), str(tmp_path / "cache")
    with fluid.scope_guard(scope):
        w0 = _w(scope)
        f.save_check_point(exe, root, TrainStatus(7), main_program=main, fs=fs, local_cache_path=cache)
        assert os.listdir(root) == ["__paddle_fleet_checkpoint__.0"]
        scope.find_var("w").get_tensor().set(np.zeros_like(w0), fluid.CPUPlace())
        assert f.load_check_point(exe, root, 0, main_program=main, fs=fs, local_cache_path=cache) == TrainStatus(7)
        np.testing.assert_array_equal(_w(scope), w0)
    assert fs.calls == ["upload", "download"]


def test_local_fs_and_bdfs_errors(tmp_path, monkeypatch):
    fs = LocalFS()
    d = str(tmp_path / "a" / "b")
    fs.mkdir(d)
    open(os.path.join(d, "f"), "w").close()
    os.makedirs(os.path.join(d, "sub"))
    assert fs.list_dirs(d) == ["sub"] and sorted(fs.ls_dir(d)) == ["f", "sub"]
    with pytest.raises(FSError, match="already a file"):
        fs.mkdir(os.path.join(d, "f"))
    fs.delete(os.path.join(d, "f"))
    fs.delete(d)
    assert not fs.stat(d) and fs.list_dirs(d) == []
    monkeypatch.setenv("HADOOP_HOME", str(tmp_path / "no_hadoop"))
    b = BDFS("hdfs://x", "u,p", time_out=100, sleep_inter=50)
    assert b.stat("/p") is False and b.list_dirs("/p") == []
    with pytest.raises(FSError, match="no_hadoop/bin/hadoop fs .*-put"):
        b.upload("a", "/p")


KILLED_SAVE = r"""
import sys
sys.path.insert(0, %(tests)r)
import paddle_compat as fluid
from test_fleet_checkpoint import _fleet, _model
from paddle_compat.fluid.incubate.fleet.collective import TrainStatus
f = _fleet()
main, scope, exe = _model()
with fluid.scope_guard(scope):
    f.save_check_point(exe, %(root)r, TrainStatus(1), main_program=main)
    print("SAVED", flush=True)
    f.save_check_point(exe, %(root)r, TrainStatus(2), main_program=main)   # paused, then killed
"""


def test_save_killed_midway_leaves_previous_checkpoint(tmp_path):
    """A process killed after writing a checkpoint's files but before switching it in: the previous
    checkpoint stays the newest and loads; the next save takes the number and removes the leftovers."""
    import signal
    import subprocess
    import sys
    import time
    root = str(tmp_path / "ckpt")
    src = KILLED_SAVE % {"tests": os.path.dirname(os.path.abspath(__file__)), "root": root}
    env = dict(os.environ, PADDLE_COMPAT_TEST_SAVE_PAUSE="fleet-checkpoint-written:2:%s" % tmp_path,
               OMP_NUM_THREADS="1")
    p = subprocess.Popen([sys.executable, "-c", src], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        flag = tmp_path / "fleet-checkpoint-written.paused"
        end = time.monotonic() + 120
        while not flag.exists():
            assert p.poll() is None, p.stdout.read().decode()
            assert time.monotonic() < end, "the save never reached its pause"
            time.sleep(0.05)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
    left = sorted(os.listdir(root))
    assert left[0] == "__paddle_fleet_checkpoint__.0" and len(left) == 2
    assert left[1].startswith("__paddle_fleet_checkpoint__.1.tmp-")      # the killed save's staging directory
    f = _fleet()
    main, scope, exe = _model()
    with fluid.scope_guard(scope):
        assert f._get_last_checkpoint_no(root) == 0
        assert f.load_check_point(exe, root, 0, main_program=main) == TrainStatus(1)
        f.save_check_point(exe, root, TrainStatus(2), main_program=main)
        assert sorted(os.listdir(root)) == ["__paddle_fleet_checkpoint__.0", "__paddle_fleet_checkpoint__.1"]
        assert f.load_check_point(exe, root, 0, main_program=main) == TrainStatus(2)
