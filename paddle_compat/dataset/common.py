"""Paddle 1.x's `paddle.dataset.common`: where dataset files live, and helpers scripts call.

DATA_HOME is read at call time (as Paddle does), so `paddle.dataset.common.DATA_HOME = path` and a different
HOME both move the cache, exactly as in Paddle.  `download` never touches the network: it returns the cached
file or raises `DatasetFileMissing`.  Unlike Paddle it does not reject a cached file whose md5 differs (Paddle
would re-download it; with no network the file at hand is the best there is).
"""

import glob
import hashlib
import os
import pickle
from ..ir import safe_pickle

__all__ = ["DATA_HOME", "download", "md5file", "split", "cluster_files_reader", "DatasetFileMissing"]

DATA_HOME = os.path.expanduser("~/.cache/paddle/dataset")


class DatasetFileMissing(FileNotFoundError):
    """A dataset file is not in Paddle's cache directory and cannot be downloaded here."""


def md5file(fname):
    h = hashlib.md5()
    with open(fname, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cached_path(url, module_name, save_name=None):
    """The path Paddle's `download(url, module_name, md5, save_name)` stores the file at."""
    return os.path.join(DATA_HOME, module_name, save_name if save_name is not None else url.split("/")[-1])


def download(url, module_name, md5sum=None, save_name=None):
    path = cached_path(url, module_name, save_name)
    if os.path.isfile(path):
        return path
    raise DatasetFileMissing(
        "dataset file %s is missing: this installation does not download. Fetch it from %s%s and put it at %s "
        "(the cache directory is paddle.dataset.common.DATA_HOME = %s)"
        % (os.path.basename(path), url, " (md5 %s)" % md5sum if md5sum else "", path, DATA_HOME))


def split(reader, line_count, suffix="%05d.pickle", dumper=pickle.dump):
    """Write the samples of `reader` into pickle files of about `line_count` samples (Paddle's grouping)."""
    if not callable(dumper):
        raise TypeError("dumper should be callable.")
    lines, index = [], 0
    for i, d in enumerate(reader()):
        lines.append(d)
        # Paddle's grouping: the first file holds line_count + 1 samples, the others line_count
        if i >= line_count and i % line_count == 0:
            with open(suffix % index, "wb") as f:
                dumper(lines, f)
            lines, index = [], index + 1
    if lines:
        with open(suffix % index, "wb") as f:
            dumper(lines, f)


def load_samples(f):
    """The default loader of cluster_files_reader: the pickled list split() wrote, read without running code
    (numbers, strings, numpy arrays and containers only; Paddle's default, pickle.load, runs whatever a file
    names)."""
    return safe_pickle.load(f, getattr(f, "name", "a split file"))


def cluster_files_reader(files_pattern, trainer_count, trainer_id, loader=load_samples):
    """Samples of the files matching `files_pattern` (sorted) whose index % trainer_count == trainer_id."""
    def reader():
        if not callable(loader):
            raise TypeError("loader should be callable.")
        files = sorted(glob.glob(files_pattern))
        for fn in files[trainer_id::trainer_count]:
            with open(fn, "rb") as f:
                yield from loader(f)
    return reader
