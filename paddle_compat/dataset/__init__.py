"""Paddle 1.x's `paddle.dataset`: reader creators over the files Paddle's readers read.

Files are looked up in Paddle's cache directory (`common.DATA_HOME`, `~/.cache/paddle/dataset`); nothing is
downloaded: a missing file raises `DatasetFileMissing`, naming the path to put it at and the URL Paddle fetched
it from.  Samples have Paddle 1.8's format (dtypes, shapes, normalisation, word ids).
"""

from . import common  # noqa: F401
from . import (cifar, conll05, flowers, image, imdb, imikolov, mnist, movielens, mq2007,  # noqa: F401
               sentiment, uci_housing, voc2012, wmt14, wmt16)

__all__ = ["mnist", "imikolov", "imdb", "cifar", "movielens", "conll05", "sentiment", "uci_housing", "wmt14",
           "wmt16", "mq2007", "flowers", "voc2012", "image", "common"]
