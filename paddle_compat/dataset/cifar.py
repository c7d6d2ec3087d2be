"""paddle.dataset.cifar: (image float32 (3072,) in [0, 1], label int) from the python-pickle tarballs."""

import io
import tarfile

import numpy

from . import common
from ..ir import safe_pickle

__all__ = ["train100", "test100", "train10", "test10"]

URL_PREFIX = "https://dataset.bj.bcebos.com/cifar/"
CIFAR10_URL = URL_PREFIX + "cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"
CIFAR100_URL = URL_PREFIX + "cifar-100-python.tar.gz"
CIFAR100_MD5 = "eb9058c3a382ffc7106e4002c42a8d85"


def reader_creator(filename, sub_name, cycle=False):
    def read_batch(batch, name):
        data = batch[b"data"]
        labels = batch.get(b"labels", batch.get(b"fine_labels", None))
        if labels is None:
            raise ValueError("%s:%s has neither 'labels' nor 'fine_labels'" % (filename, name))
        for sample, label in zip(data, labels):
            yield (sample / 255.0).astype(numpy.float32), int(label)

    def reader():
        while True:
            with tarfile.open(filename, mode="r") as f:
                for name in [m.name for m in f if sub_name in m.name]:
                    # the batches are Python 2 pickles of a dict of numpy arrays and lists: read without
                    # running code (safe_pickle), from memory (a gzip member seeks slowly)
                    data = io.BytesIO(f.extractfile(name).read())
                    batch = safe_pickle.load(data, "%s:%s" % (filename, name), encoding="bytes")
                    yield from read_batch(batch, name)
            if not cycle:
                break
    return reader


def train100():
    return reader_creator(common.download(CIFAR100_URL, "cifar", CIFAR100_MD5), "train")


def test100():
    return reader_creator(common.download(CIFAR100_URL, "cifar", CIFAR100_MD5), "test")


def train10(cycle=False):
    return reader_creator(common.download(CIFAR10_URL, "cifar", CIFAR10_MD5), "data_batch", cycle=cycle)


def test10(cycle=False):
    return reader_creator(common.download(CIFAR10_URL, "cifar", CIFAR10_MD5), "test_batch", cycle=cycle)


def fetch():
    common.download(CIFAR10_URL, "cifar", CIFAR10_MD5)
    common.download(CIFAR100_URL, "cifar", CIFAR100_MD5)
