"""paddle.dataset.imikolov: PTB n-grams or (src, trg) sequences of word ids from simple-examples.tgz.

`build_dict()` keys are bytes words (Paddle 1.8 on Python 3) plus the str keys '<s>', '<e>', '<unk>'; as in
Paddle, a corpus token b'<unk>' stays an ordinary word (Paddle's delete looks for the str key).
"""

import collections
import tarfile

from . import common
from ._vocab import ids_by_frequency

__all__ = ["train", "test", "build_dict"]

URL = "https://dataset.bj.bcebos.com/imikolov%2Fsimple-examples.tgz"
MD5 = "30177ea32e27c525793142b6bf2c8e2d"
TRAIN_FILE = "./simple-examples/data/ptb.train.txt"
VALID_FILE = "./simple-examples/data/ptb.valid.txt"


class DataType(object):
    NGRAM = 1
    SEQ = 2


def _extract(tf, name):
    try:
        return tf.extractfile(name)
    except KeyError:
        raise KeyError("%s has no member %s" % (tf.name, name)) from None


def word_count(f, word_freq=None):
    if word_freq is None:
        word_freq = collections.defaultdict(int)
    for line in f:
        for w in line.strip().split():
            word_freq[w] += 1
        word_freq["<s>"] += 1
        word_freq["<e>"] += 1
    return word_freq


def build_dict(min_word_freq=50):
    with tarfile.open(common.download(URL, "imikolov", MD5)) as tf:
        word_freq = word_count(_extract(tf, VALID_FILE), word_count(_extract(tf, TRAIN_FILE)))
    word_freq.pop("<unk>", None)
    return ids_by_frequency(word_freq, min_word_freq)


def reader_creator(filename, word_idx, n, data_type):
    def reader():
        with tarfile.open(common.download(URL, "imikolov", MD5)) as tf:
            unk = word_idx["<unk>"]
            for line in _extract(tf, filename):
                if data_type == DataType.NGRAM:
                    if n <= -1:
                        raise ValueError("imikolov: invalid gram length n=%s" % n)
                    words = ["<s>"] + line.strip().split() + ["<e>"]
                    if len(words) >= n:
                        ids = [word_idx.get(w, unk) for w in words]
                        for i in range(n, len(ids) + 1):
                            yield tuple(ids[i - n:i])
                elif data_type == DataType.SEQ:
                    ids = [word_idx.get(w, unk) for w in line.strip().split()]
                    src_seq = [word_idx["<s>"]] + ids
                    trg_seq = ids + [word_idx["<e>"]]
                    if n > 0 and len(src_seq) > n:
                        continue
                    yield src_seq, trg_seq
                else:
                    raise ValueError("imikolov: unknown data_type %r (DataType.NGRAM or DataType.SEQ)" % data_type)
    return reader


def train(word_idx, n, data_type=DataType.NGRAM):
    return reader_creator(TRAIN_FILE, word_idx, n, data_type)


def test(word_idx, n, data_type=DataType.NGRAM):
    return reader_creator(VALID_FILE, word_idx, n, data_type)


def fetch():
    common.download(URL, "imikolov", MD5)
