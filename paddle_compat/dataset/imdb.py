"""paddle.dataset.imdb: (word ids, label) from aclImdb_v1.tar.gz; label 0 = positive, 1 = negative.

Words are the file's bytes, stripped of punctuation, lower-cased and split on whitespace; `word_dict()` keys
are bytes words (as in Paddle 1.8 on Python 3) plus the str key '<unk>'.
"""

import collections
import re
import string
import tarfile

from . import common
from ._vocab import ids_by_frequency

__all__ = ["build_dict", "train", "test", "word_dict"]

URL = "https://dataset.bj.bcebos.com/imdb%2FaclImdb_v1.tar.gz"
MD5 = "7c2ac02c03563afcf9b574c7e56c153a"
_PUNCT = string.punctuation.encode()


def tokenize(pattern):
    """Token lists of the archive members whose name matches `pattern`, in archive order."""
    with tarfile.open(common.download(URL, "imdb", MD5)) as tarf:
        for member in tarf:
            if pattern.match(member.name):
                text = tarf.extractfile(member).read()
                yield text.rstrip(b"\n\r").translate(None, _PUNCT).lower().split()


def build_dict(pattern, cutoff):
    word_freq = collections.defaultdict(int)
    for doc in tokenize(pattern):
        for word in doc:
            word_freq[word] += 1
    return ids_by_frequency(word_freq, cutoff)


def reader_creator(pos_pattern, neg_pattern, word_idx):
    unk = word_idx["<unk>"]
    samples = []
    for pattern, label in ((pos_pattern, 0), (neg_pattern, 1)):
        for doc in tokenize(pattern):
            samples.append(([word_idx.get(w, unk) for w in doc], label))

    def reader():
        yield from samples
    return reader


def train(word_idx):
    return reader_creator(re.compile(r"aclImdb/train/pos/.*\.txt$"), re.compile(r"aclImdb/train/neg/.*\.txt$"),
                          word_idx)


def test(word_idx):
    return reader_creator(re.compile(r"aclImdb/test/pos/.*\.txt$"), re.compile(r"aclImdb/test/neg/.*\.txt$"),
                          word_idx)


def word_dict():
    return build_dict(re.compile(r"aclImdb/((train)|(test))/((pos)|(neg))/.*\.txt$"), 150)


def fetch():
    common.download(URL, "imdb", MD5)
