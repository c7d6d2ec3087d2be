"""paddle.dataset.sentiment: NLTK's movie_reviews corpus as (word ids, label) samples; label 0 = neg, 1 = pos.

Paddle reads the corpus through NLTK; here it is read straight from movie_reviews.zip in the cache
(DATA_HOME/corpora/movie_reviews.zip, as Paddle stores it) or from an extracted DATA_HOME/corpora/movie_reviews/
directory, tokenized as NLTK's reader does (runs of word characters, runs of other non-space characters). As in
Paddle 1.8: word ids by falling frequency (ties in order of first appearance, neg files first, each category's
files sorted by name), samples alternate neg/pos files, the first 1600 are train(), the rest test(), and
train()/test() return generators of samples (not reader functions).
"""

import collections
import os
import re
import zipfile

from . import common

__all__ = ["train", "test", "get_word_dict"]

URL = "https://corpora.bj.bcebos.com/movie_reviews%2Fmovie_reviews.zip"
MD5 = "155de2b77c6834dd8eea7cbe88e93acb"
NUM_TRAINING_INSTANCES = 1600
NUM_TOTAL_INSTANCES = 2000
_TOKEN = re.compile(r"\w+|[^\w\s]+")
_FILE = re.compile(r"movie_reviews/(neg|pos)/([^/]+\.txt)$")


def _corpus():
    """{category: [(file name, text), ...] sorted by name}."""
    extracted = os.path.join(common.DATA_HOME, "corpora", "movie_reviews")
    files = collections.defaultdict(list)
    if os.path.isdir(extracted):
        for cat in ("neg", "pos"):
            folder = os.path.join(extracted, cat)
            for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
                if name.endswith(".txt") and not name.startswith("."):
                    with open(os.path.join(folder, name), encoding="ascii") as f:
                        files[cat].append((name, f.read()))
    else:
        path = common.download(URL, "corpora", MD5, save_name="movie_reviews.zip")
        with zipfile.ZipFile(path) as zf:
            for name in zf.namelist():
                m = _FILE.search(name)
                if m and not m.group(2).startswith("."):
                    files[m.group(1)].append((m.group(2), zf.read(name).decode("ascii")))
    return {cat: sorted(files[cat]) for cat in sorted(files)}


def _words(text):
    return _TOKEN.findall(text)


def get_word_dict():
    """[(word, id), ...] by falling frequency over the whole corpus."""
    freq = collections.defaultdict(int)
    for cat, docs in _corpus().items():
        for _, text in docs:
            for w in _words(text):
                freq[w] += 1
    ranked = sorted(freq.items(), key=lambda kv: -kv[1])     # stable: ties keep first appearance
    return [(w, i) for i, (w, _) in enumerate(ranked)]


def load_sentiment_data():
    corpus = _corpus()
    ids = dict(get_word_dict())
    data = []
    for (_, neg), (_, pos) in zip(corpus.get("neg", []), corpus.get("pos", [])):
        for text, label in ((neg, 0), (pos, 1)):
            data.append(([ids[w.lower()] for w in _words(text)], label))
    return data


def reader_creator(data):
    for words, label in data:
        yield words, label


def train():
    return reader_creator(load_sentiment_data()[:NUM_TRAINING_INSTANCES])


def test():
    return reader_creator(load_sentiment_data()[NUM_TRAINING_INSTANCES:])
