"""paddle.distributed.fs_wrapper: the file systems fleet's checkpoints go to. LocalFS is a local
directory; BDFS runs the `hadoop fs` client (on PATH, or under $HADOOP_HOME/bin) for HDFS/AFS paths.

Paths are returned as Paddle returns them (names only, not joined). Where we differ from Paddle: LocalFS.mkdir
makes the directories itself (Paddle ran `mkdir -p` through a shell), and a failing hadoop command raises
FSError naming the command (Paddle's run_cmd returned its output whatever happened).
"""

import os
import shutil
import subprocess
import time
from pathlib import PurePosixPath

__all__ = ["FS", "LocalFS", "BDFS", "FSError"]


class FSError(RuntimeError):
    """A file system command failed; the message names it."""


class FS:
    """What fleet's checkpoint functions call on a file system."""

    def list_dirs(self, fs_path):
        raise NotImplementedError

    def ls_dir(self, fs_path):
        raise NotImplementedError

    def stat(self, fs_path):
        raise NotImplementedError

    def upload(self, local_path, fs_path):
        raise NotImplementedError

    def download(self, fs_path, local_path):
        raise NotImplementedError

    def mkdir(self, fs_path):
        raise NotImplementedError

    def mv(self, fs_src_path, fs_dst_path):
        raise NotImplementedError

    def rmr(self, fs_path):
        raise NotImplementedError

    def rm(self, fs_path):
        raise NotImplementedError

    def delete(self, fs_path):
        raise NotImplementedError

    def need_upload_download(self):
        raise NotImplementedError


class LocalFS(FS):
    def list_dirs(self, fs_path):
        """Names of the directories in fs_path ([] when it does not exist)."""
        if not self.stat(fs_path):
            return []
        return [f for f in os.listdir(fs_path) if os.path.isdir(os.path.join(fs_path, f))]

    def ls_dir(self, fs_path):
        return list(os.listdir(fs_path))

    def stat(self, fs_path):
        return os.path.exists(fs_path)

    def mkdir(self, fs_path):
        if os.path.isfile(fs_path):
            raise FSError("LocalFS.mkdir: %s is already a file" % fs_path)
        os.makedirs(fs_path, exist_ok=True)

    def mv(self, fs_src_path, fs_dst_path):
        os.rename(fs_src_path, fs_dst_path)

    def rmr(self, fs_path):
        shutil.rmtree(fs_path)

    def rm(self, fs_path):
        os.remove(fs_path)

    def delete(self, fs_path):
        if not self.stat(fs_path):
            return None
        if os.path.isfile(fs_path) or os.path.islink(fs_path):
            return self.rm(fs_path)
        return self.rmr(fs_path)

    def need_upload_download(self):
        return False


class BDFS(FS):
    """HDFS/AFS through the hadoop client. time_out and sleep_inter are milliseconds, as Paddle's: a
    command is retried every sleep_inter until it succeeds or time_out has passed."""

    def __init__(self, hdfs_name, hdfs_ugi, time_out=20 * 60 * 1000, sleep_inter=1000):
        home = os.environ.get("HADOOP_HOME")
        self._hadoop = os.path.join(home, "bin", "hadoop") if home else "hadoop"
        self._conf = ["-Dfs.default.name=%s" % hdfs_name, "-Dhadoop.job.ugi=%s" % hdfs_ugi]
        self._time_out = time_out / 1000.0
        self._sleep_inter = sleep_inter / 1000.0

    def _run(self, *args, check=True):
        """(return code, stdout) of `hadoop fs <conf> args`, retried until success or time_out."""
        cmd = [self._hadoop, "fs"] + self._conf + list(args)
        end = time.monotonic() + self._time_out
        while True:
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   timeout=max(self._time_out, 1.0))
                rc, out, err = p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
            except (OSError, subprocess.TimeoutExpired) as e:
                rc, out, err = -1, "", str(e)
            if rc == 0 or not check or time.monotonic() + self._sleep_inter > end:
                break
            time.sleep(self._sleep_inter)
        if check and rc != 0:
            raise FSError("BDFS: `%s` failed (exit %d): %s" % (" ".join(cmd), rc, err.strip()[:500]))
        return rc, out

    def _test(self, flag, fs_path):
        return self._run("-test", flag, fs_path, check=False)[0] == 0

    def list_dirs(self, fs_path):
        if not self.stat(fs_path):
            return []
        return self.ls_dir(fs_path)[0]

    def ls_dir(self, fs_path):
        """(directory names, file names) in fs_path."""
        dirs, files = [], []
        for line in self._run("-ls", fs_path)[1].splitlines():
            arr = line.split()
            if len(arr) != 8 or fs_path not in arr[7]:
                continue
            (dirs if arr[0].startswith("d") else files).append(PurePosixPath(arr[7]).name)
        return dirs, files

    def is_dir(self, fs_path):
        return self._test("-d", fs_path)

    def stat(self, fs_path):
        return self._test("-e", fs_path)

    def upload(self, local_path, fs_path):
        self._run("-put", local_path, fs_path)

    def download(self, fs_path, local_path):
        self._run("-get", fs_path, local_path + "/")

    def mkdir(self, fs_path):
        if not self.stat(fs_path):
            self._run("-mkdir", "-p", fs_path)

    def mv(self, fs_src_path, fs_dst_path):
        self._run("-mv", fs_src_path, fs_dst_path)

    def rmr(self, fs_path):
        if self.stat(fs_path):
            self._run("-rmr", fs_path)

    def rm(self, fs_path):
        if self.stat(fs_path):
            self._run("-rm", fs_path)

    def delete(self, fs_path):
        if not self.stat(fs_path):
            return None
        return self.rmr(fs_path) if self.is_dir(fs_path) else self.rm(fs_path)

    def need_upload_download(self):
        return True
