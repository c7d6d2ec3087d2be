"""fleet.utils modules Paddle 1.8's scripts import: fleet_barrier_util.check_all_trainers_ready (a barrier
over files in a shared directory, or on HDFS through the hadoop client), hdfs.HDFSClient (run here against
a stand-in `hadoop` script over a local directory), utils (programs saved/loaded/checked), FleetUtil modes."""

import os
import stat
import threading

import pytest

import paddle_compat as fluid
from paddle_compat.fluid.incubate.fleet.base import role_maker as rm
from paddle_compat.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
from paddle_compat.fluid.incubate.fleet.utils import utils
from paddle_compat.fluid.incubate.fleet.utils.fleet_barrier_util import check_all_trainers_ready
from paddle_compat.fluid.incubate.fleet.utils.fleet_util import FleetUtil
from paddle_compat.fluid.incubate.fleet.utils.hdfs import HDFSClient

# a stand-in for `hadoop fs -D.. <op> args` over the directory $FAKE_HDFS_ROOT
FAKE_HADOOP = r'''#!/bin/sh
shift   # fs
while [ "${1#-D}" != "$1" ]; do shift; done
op=$1; shift
R=$FAKE_HDFS_ROOT
case $op in
  -test) [ "$1" = -d ] && { [ -d "$R$2" ]; exit $?; }; [ -e "$R$2" ]; exit $? ;;
  -mkdir) [ "$1" = -p ] && shift; mkdir -p "$R$1" ;;
  -put) cp -r "$1" "$R$2" ;;
  -get) cp -r "$R$1" "$2" ;;
  -mv) mv "$R$1" "$R$2" ;;
  -rm|-rmr) rm -rf "$R$1" ;;
  -cat) cat "$R$1" ;;
  -lsr) [ -e "$R$1" ] || exit 1; find "$R$1" -type f | sort | while read -r f; do
       echo "-rw-r--r-- 1 u g 0 2020-01-01 00:00 ${f#$R}"; done ;;
  -ls) [ -e "$R$1" ] || exit 1; for f in "$R$1"/*; do [ -e "$f" ] || continue
       t=-rw-r--r--; [ -d "$f" ] && t=drwxr-xr-x
       echo "$t 1 u g 0 2020-01-01 00:00 ${f#$R}"; done ;;
  *) exit 2 ;;
esac
'''


def _init(current_id, worker_num):
    fleet.init(rm.UserDefinedRoleMaker(current_id=current_id, role=rm.Role.WORKER, worker_num=worker_num,
                                       server_endpoints=["127.0.0.1"]))


def test_barrier_one_worker_local_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("HADOOP_HOME", raising=False)
    _init(0, 1)
    ready = str(tmp_path / "ready")
    check_all_trainers_ready(ready, 0)
    assert os.listdir(ready) == ["ready.0.0.done"]


def test_barrier_waits_for_this_epochs_markers(tmp_path, monkeypatch):
    monkeypatch.delenv("HADOOP_HOME", raising=False)
    _init(0, 2)
    ready = str(tmp_path / "ready")
    os.makedirs(ready)
    open(os.path.join(ready, "ready.0.1.done"), "w").close()     # trainer 1 at epoch 0 only
    with pytest.raises(TimeoutError, match="1 of 2 trainers ready at epoch 1"):
        check_all_trainers_ready(ready, 1, timeout=0.3, poll_interval=0.05)
    threading.Timer(0.2, lambda: open(os.path.join(ready, "ready.1.1.done"), "w").close()).start()
    check_all_trainers_ready(ready, 1, timeout=10, poll_interval=0.05)


def _fake_hadoop(tmp_path, monkeypatch):
    home = tmp_path / "hadoop"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "hadoop"
    script.write_text(FAKE_HADOOP)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    root = tmp_path / "hdfs"
    root.mkdir()
    monkeypatch.setenv("FAKE_HDFS_ROOT", str(root))
    return str(home), root


def test_barrier_on_hdfs(tmp_path, monkeypatch):
    home, root = _fake_hadoop(tmp_path, monkeypatch)
    monkeypatch.setenv("HADOOP_HOME", home)
    monkeypatch.setenv("FS_NAME", "hdfs://x")
    monkeypatch.setenv("FS_UGI", "u,p")
    _init(0, 1)
    check_all_trainers_ready("/ready/", 3, timeout=30)
    assert os.listdir(str(root / "ready")) == ["ready.3.0.done"]


def test_barrier_without_hadoop_client_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("HADOOP_HOME", str(tmp_path / "none"))
    _init(0, 1)
    with pytest.raises(RuntimeError, match="cannot create /ready/ on HDFS"):
        check_all_trainers_ready("/ready/", 0, timeout=1)


def test_hdfs_client(tmp_path, monkeypatch):
    home, root = _fake_hadoop(tmp_path, monkeypatch)
    c = HDFSClient(home, {"fs.default.name": "hdfs://x", "hadoop.job.ugi": "u,p"})
    assert c.makedirs("/a/b") and c.is_dir("/a/b") and not c.is_file("/a/b")
    local = tmp_path / "f.txt"
    local.write_text("hello")
    assert c.upload("/a/b", str(local)) and c.is_file("/a/b/f.txt")
    assert c.cat("/a/b/f.txt") == "hello"
    assert c.ls("/a/b") == ["/a/b/f.txt"]
    assert c.rename("/a/b/f.txt", "/a/g.txt") and c.is_exist("/a/g.txt")
    assert c.delete("/a") and not c.is_exist("/a")
    assert c.ls("/missing") == []
    assert not HDFSClient(str(tmp_path / "none"), {}).is_exist("/a")


def test_contrib_multi_upload_download(tmp_path, monkeypatch):
    from paddle_compat.fluid.contrib import HDFSClient as ContribClient, multi_download, multi_upload
    assert ContribClient is HDFSClient
    home, root = _fake_hadoop(tmp_path, monkeypatch)
    c = HDFSClient(home, {})
    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    for name in ("a", "b", "d/c"):
        (src / name).write_text(name)
    multi_upload(c, "/up", str(src))
    assert sorted(c.lsr("/up")) == ["/up/a", "/up/b", "/up/d/c"]
    got = [multi_download(c, "/up", str(tmp_path / ("t%d" % t)), t, 2) for t in range(2)]
    files = sorted(os.path.relpath(f, str(tmp_path)) for g in got for f in g)
    assert len(files) == 3 and all(os.path.exists(str(tmp_path / f)) for f in files)
    assert sorted(open(str(tmp_path / f)).read() for f in files) == ["a", "b", "d/c"]


def test_utils_programs(tmp_path):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data(name="x", shape=[None, 4], dtype="float32")
        fluid.layers.fc(x, 3, param_attr=fluid.ParamAttr(name="w"))
    path = str(tmp_path / "__model__")
    utils.save_program(main, path)
    back = utils.load_program(path)
    assert [op.type for op in back.global_block().ops] == [op.type for op in main.global_block().ops]
    assert utils.check_pruned_program_vars(main, back)
    other = fluid.Program()
    other.global_block().create_parameter(name="w", shape=[4, 5], dtype="float32")
    assert not utils.check_pruned_program_vars(main, other)
    with pytest.raises(NotImplementedError, match="text format"):
        utils.load_program(path, is_text=True)


def test_fleet_util_modes():
    FleetUtil()
    FleetUtil(mode="transpiler")
    with pytest.raises(ValueError, match="mode"):
        FleetUtil("other")
