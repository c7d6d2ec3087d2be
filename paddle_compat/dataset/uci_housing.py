"""paddle.dataset.uci_housing: Boston housing, 13 normalised features (float64) and the price, shape (1,).

Features are (x - mean) / (max - min) over the whole file; the first 80% of rows train, the rest test.
Paddle also plots the feature ranges into ./image/ranges.png with matplotlib; we do not write that file.
"""

import numpy as np

from . import common

__all__ = ["train", "test"]

URL = "http://paddlemodels.bj.bcebos.com/uci_housing/housing.data"
MD5 = "d4accdce7a25600298819f8e28e8d593"
feature_names = ["CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX", "PTRATIO", "B", "LSTAT"]

UCI_TRAIN_DATA = None
UCI_TEST_DATA = None


def load_data(filename, feature_num=14, ratio=0.8):
    global UCI_TRAIN_DATA, UCI_TEST_DATA
    if UCI_TRAIN_DATA is not None and UCI_TEST_DATA is not None:
        return
    data = np.fromfile(filename, sep=" ")
    if data.size == 0 or data.size % feature_num:
        raise ValueError("%s: expected rows of %d numbers, got %d numbers" % (filename, feature_num, data.size))
    data = data.reshape(data.shape[0] // feature_num, feature_num)
    maximums, minimums = data.max(axis=0), data.min(axis=0)
    avgs = data.sum(axis=0) / data.shape[0]
    for i in range(feature_num - 1):
        data[:, i] = (data[:, i] - avgs[i]) / (maximums[i] - minimums[i])
    offset = int(data.shape[0] * ratio)
    UCI_TRAIN_DATA, UCI_TEST_DATA = data[:offset], data[offset:]


def _reader(part):
    load_data(common.download(URL, "uci_housing", MD5))

    def reader():
        for d in (UCI_TRAIN_DATA if part == "train" else UCI_TEST_DATA):
            yield d[:-1], d[-1:]
    return reader


def train():
    return _reader("train")


def test():
    return _reader("test")


def predict_reader():
    load_data(common.download(URL, "uci_housing", MD5))
    return (UCI_TEST_DATA[0][:-1],)


def fetch():
    common.download(URL, "uci_housing", MD5)
