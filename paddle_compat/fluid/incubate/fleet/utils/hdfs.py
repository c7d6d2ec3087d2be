"""fleet.utils.hdfs.HDFSClient: the `hadoop fs` client as Paddle 1.8's fleet scripts call it
(HDFSClient(hadoop_home, {"fs.default.name": ..., "hadoop.job.ugi": ...})).

As in Paddle, queries answer False / [] when the command fails (after retries) and the failure is logged
with the command; upload and download return False. Paddle's multi-process transfers are single-process here.
"""

import logging
import os
import subprocess
import time

__all__ = ["HDFSClient"]

_logger = logging.getLogger("paddle_compat.hdfs")


class HDFSClient:
    def __init__(self, hadoop_home, configs):
        self.hadoop_home = hadoop_home
        self.pre_commands = [os.path.join(str(hadoop_home), "bin", "hadoop"), "fs"]
        for k, v in (configs or {}).items():
            self.pre_commands.append("-D%s=%s" % (k, v))

    def _run(self, args, retry_times=5, quiet=False):
        """(return code, stdout lines) of `hadoop fs <configs> args`; retried while it fails (quiet: a
        query whose "no" is an exit status, neither retried nor logged)."""
        cmd = self.pre_commands + list(args)
        rc, out = -1, ""
        for i in range(max(int(retry_times), 0) + 1):
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                rc, out, err = p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
            except OSError as e:
                rc, err = -1, str(e)
            if rc == 0 or (quiet and rc != -1):
                break
            _logger.warning("HDFSClient: try %d: `%s` failed (exit %d): %s", i, " ".join(cmd), rc, err.strip()[:300])
            if i < retry_times:
                time.sleep(min(2 ** i * 0.1, 2.0))
        return rc, out.splitlines()

    def cat(self, hdfs_path=None):
        rc, lines = self._run(["-cat", hdfs_path], retry_times=1)
        return "\n".join(lines) if rc == 0 else ""

    def is_exist(self, hdfs_path=None):
        return self._run(["-test", "-e", hdfs_path], retry_times=1, quiet=True)[0] == 0

    def is_dir(self, hdfs_path=None):
        return self._run(["-test", "-d", hdfs_path], retry_times=1, quiet=True)[0] == 0

    def is_file(self, hdfs_path=None):
        return self.is_exist(hdfs_path) and not self.is_dir(hdfs_path)

    def delete(self, hdfs_path):
        if not self.is_exist(hdfs_path):
            return True
        flag = "-rmr" if self.is_dir(hdfs_path) else "-rm"
        return self._run([flag, hdfs_path])[0] == 0

    def rename(self, hdfs_src_path, hdfs_dst_path, overwrite=False):
        if overwrite and self.is_exist(hdfs_dst_path):
            self.delete(hdfs_dst_path)
        return self._run(["-mv", hdfs_src_path, hdfs_dst_path])[0] == 0

    @staticmethod
    def make_local_dirs(local_path):
        os.makedirs(local_path, exist_ok=True)

    def makedirs(self, hdfs_path):
        if self.is_exist(hdfs_path):
            return True
        return self._run(["-mkdir", "-p", hdfs_path])[0] == 0

    def ls(self, hdfs_path):
        """The paths directly under hdfs_path ([] if it cannot be listed)."""
        rc, lines = self._run(["-ls", hdfs_path])
        if rc != 0:
            return []
        return [ln.split()[7] for ln in lines if len(ln.split()) == 8]

    def lsr(self, hdfs_path, excludes=(), sort=True):
        """The files (not directories) anywhere under hdfs_path, oldest first (sort=False: as listed)."""
        rc, lines = self._run(["-lsr", hdfs_path])
        if rc != 0:
            return []
        rows = [ln.split() for ln in lines]
        files = [(r[5] + " " + r[6], r[7]) for r in rows if len(r) == 8 and not r[0].startswith("d")
                 and not any(e in r[7] for e in excludes)]
        return [p for _, p in (sorted(files, key=lambda f: f[0]) if sort else files)]

    def upload(self, hdfs_path, local_path, overwrite=False, retry_times=5):
        if not os.path.exists(local_path):
            _logger.warning("HDFSClient.upload: %s does not exist", local_path)
            return False
        if overwrite:
            target = hdfs_path.rstrip("/") + "/" + os.path.basename(local_path.rstrip("/")) \
                if self.is_dir(hdfs_path) else hdfs_path
            self.delete(target)
        return self._run(["-put", local_path, hdfs_path], retry_times)[0] == 0

    def download(self, hdfs_path, local_path, overwrite=False, unzip=False):
        if overwrite and os.path.exists(local_path) and not os.path.isdir(local_path):
            os.remove(local_path)
        return self._run(["-get", hdfs_path, local_path])[0] == 0
