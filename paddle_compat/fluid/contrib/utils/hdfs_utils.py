"""contrib.utils.hdfs_utils: HDFSClient (the one of fleet.utils.hdfs) and Paddle's bulk transfers.

multi_download / multi_upload take Paddle's multi_processes argument and transfer one file after another
(the hadoop client runs as a process per file either way).
"""

import os

from ...incubate.fleet.utils.hdfs import HDFSClient

__all__ = ["HDFSClient", "multi_download", "multi_upload"]


def _check(client):
    if not isinstance(client, HDFSClient):
        raise TypeError("client must be an HDFSClient, got %s" % type(client).__name__)


def multi_download(client, hdfs_path, local_path, trainer_id, trainers, multi_processes=5):
    """This trainer's share (every trainers-th file from trainer_id) of the files under hdfs_path, downloaded
    into local_path keeping their relative directories; returns the local paths."""
    _check(client)
    client.make_local_dirs(local_path)
    mine = client.lsr(hdfs_path, sort=True)[trainer_id::trainers]
    out = []
    for f in mine:
        rel = os.path.relpath(os.path.dirname(f), hdfs_path)
        d = local_path if rel == os.curdir else os.path.join(local_path, rel)
        client.make_local_dirs(d)
        if not client.download(f, d):
            raise RuntimeError("multi_download: could not download %s into %s" % (f, d))
        out.append(os.path.join(d, os.path.basename(f)))
    return out


def multi_upload(client, hdfs_path, local_path, multi_processes=5, overwrite=False, sync=True):
    """Every file under local_path, uploaded below hdfs_path keeping their relative directories."""
    _check(client)
    if not os.path.isdir(local_path):
        raise ValueError("multi_upload: %s is not a directory" % local_path)
    for root, _, files in os.walk(local_path):
        rel = os.path.relpath(root, local_path)
        target = hdfs_path if rel == os.curdir else os.path.join(hdfs_path, rel)
        if files:
            client.makedirs(target)
        for name in sorted(files):
            if not client.upload(target, os.path.join(root, name), overwrite, retry_times=5):
                raise RuntimeError("multi_upload: could not upload %s to %s" % (os.path.join(root, name), target))
