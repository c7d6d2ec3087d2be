"""check_all_trainers_ready: a file-based barrier of the transpiler fleet's trainers at an epoch.

Each trainer puts `ready.<epoch>.<trainer id>.done` into ready_path, then waits until every trainer's file
for that epoch is there. ready_path is on HDFS when HADOOP_HOME is set (with FS_NAME and FS_UGI, as in
Paddle), else a directory every trainer can reach (one machine, or a shared file system).

Where we differ from Paddle: it counts this epoch's files (Paddle counted every file modulo the trainer
count, and took a listing that failed, e.g. without a hadoop client, as "all ready"); a marker that cannot be
written raises, naming ready_path; `timeout` (seconds) bounds the wait (None: wait as long as it takes, as
Paddle).
"""

import os
import tempfile
import time
from ..parameter_server.distribute_transpiler import fleet
from .hdfs import HDFSClient

__all__ = ["check_all_trainers_ready"]


def _marker(epoch, trainer_id):
    return "ready.{}.{}.done".format(epoch, trainer_id)


def _ready(names, epoch, trainer_num):
    want = {_marker(epoch, t) for t in range(trainer_num)}
    return len(want & {os.path.basename(str(n).rstrip("/")) for n in names})


def check_all_trainers_ready(ready_path, epoch, timeout=None, poll_interval=None):
    trainer_num, trainer_id = fleet.worker_num(), fleet.worker_index()
    node = _marker(epoch, trainer_id)
    hadoop_home = os.getenv("HADOOP_HOME")
    if hadoop_home:
        client = HDFSClient(hadoop_home, {"fs.default.name": os.getenv("FS_NAME"),
                                          "hadoop.job.ugi": os.getenv("FS_UGI")})
        if not client.is_dir(ready_path) and not client.makedirs(ready_path):
            raise RuntimeError("check_all_trainers_ready: cannot create %s on HDFS (HADOOP_HOME=%s)"
                               % (ready_path, hadoop_home))
        with tempfile.TemporaryDirectory() as d:
            local = os.path.join(d, node)
            open(local, "w").close()
            if not client.upload(hdfs_path=ready_path, local_path=local, overwrite=True, retry_times=0):
                raise RuntimeError("check_all_trainers_ready: cannot put %s on HDFS %s" % (node, ready_path))
        listing = lambda: client.ls(ready_path)   # noqa: E731
        poll = 10.0 if poll_interval is None else poll_interval
        where = "HDFS %s" % ready_path
    else:
        os.makedirs(ready_path, exist_ok=True)
        tmp = os.path.join(ready_path, ".%s.%d.tmp" % (node, os.getpid()))
        open(tmp, "w").close()
        os.replace(tmp, os.path.join(ready_path, node))
        listing = lambda: os.listdir(ready_path)   # noqa: E731
        poll = 0.5 if poll_interval is None else poll_interval
        where = ready_path
    print("PUT {} ON {} OK".format(node, where))
    end = None if timeout is None else time.monotonic() + timeout
    while True:
        ready = _ready(listing(), epoch, trainer_num)
        if ready >= trainer_num:
            break
        print("have {} trainers need to be ready".format(trainer_num - ready))
        if end is not None and time.monotonic() > end:
            raise TimeoutError("check_all_trainers_ready: %d of %d trainers ready at epoch %s in %s after %ss"
                               % (ready, trainer_num, epoch, where, timeout))
        time.sleep(poll)
    print("All trainers are ready, continue training")
