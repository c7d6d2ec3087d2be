"""paddle.dataset.mnist: (image float32 (784,) in [-1, 1], label int) from the gzip idx files."""

import gzip
import struct

import numpy

from . import common

__all__ = ["train", "test"]

URL_PREFIX = "https://dataset.bj.bcebos.com/mnist/"
TEST_IMAGE_URL = URL_PREFIX + "t10k-images-idx3-ubyte.gz"
TEST_IMAGE_MD5 = "9fb629c4189551a2d022fa330f9573f3"
TEST_LABEL_URL = URL_PREFIX + "t10k-labels-idx1-ubyte.gz"
TEST_LABEL_MD5 = "ec29112dd5afa0611ce80d1b7f02629c"
TRAIN_IMAGE_URL = URL_PREFIX + "train-images-idx3-ubyte.gz"
TRAIN_IMAGE_MD5 = "f68b3c2dcbeaaa9fbdd348bbdeb94873"
TRAIN_LABEL_URL = URL_PREFIX + "train-labels-idx1-ubyte.gz"
TRAIN_LABEL_MD5 = "d53e105ee54ea40749a09fcbcd1e9432"


def reader_creator(image_filename, label_filename, buffer_size):
    # buffer_size is kept for signature compatibility; Paddle reads in chunks of it (and so needs the sample
    # count to be a multiple of it), we read every sample.
    def reader():
        with gzip.GzipFile(image_filename, "rb") as f:
            img_buf = f.read()
        with gzip.GzipFile(label_filename, "rb") as f:
            lab_buf = f.read()
        _, image_num, rows, cols = struct.unpack_from(">IIII", img_buf, 0)
        _, label_num = struct.unpack_from(">II", lab_buf, 0)
        if image_num < label_num:
            raise ValueError("%s holds %d images but %s holds %d labels"
                             % (image_filename, image_num, label_filename, label_num))
        labels = numpy.frombuffer(lab_buf, numpy.uint8, label_num, 8)
        images = numpy.frombuffer(img_buf, numpy.uint8, label_num * rows * cols, 16)
        images = images.reshape(label_num, rows * cols).astype("float32")
        images = images / 255.0   # float32 throughout, as Paddle computes it
        images = images * 2.0
        images = images - 1.0
        for i in range(label_num):
            yield images[i, :], int(labels[i])
    return reader


def train():
    return reader_creator(common.download(TRAIN_IMAGE_URL, "mnist", TRAIN_IMAGE_MD5),
                          common.download(TRAIN_LABEL_URL, "mnist", TRAIN_LABEL_MD5), 100)


def test():
    return reader_creator(common.download(TEST_IMAGE_URL, "mnist", TEST_IMAGE_MD5),
                          common.download(TEST_LABEL_URL, "mnist", TEST_LABEL_MD5), 100)


def fetch():
    for url, md5 in ((TRAIN_IMAGE_URL, TRAIN_IMAGE_MD5), (TRAIN_LABEL_URL, TRAIN_LABEL_MD5),
                     (TEST_IMAGE_URL, TEST_IMAGE_MD5), (TEST_LABEL_URL, TEST_LABEL_MD5)):
        common.download(url, "mnist", md5)
