"""paddle.dataset.mq2007: LETOR 4.0 MQ2007 learning-to-rank samples (Fold1 train.txt / test.txt).

Paddle downloads MQ2007.rar and unpacks it next to itself with the `rarfile` package; here the files are read
from DATA_HOME/MQ2007/ if already unpacked there (where Paddle reads them: DATA_HOME/MQ2007/MQ2007/MQ2007/
Fold1/train.txt), else MQ2007.rar is unpacked with `rarfile` when installed. Lines are `<relevance> qid:<id>
1:<f1> ... 46:<f46> #<comment>`; a line without 48 fields is skipped with a message (Paddle 1.8 meant to, but
fails there with NameError: its module lacks `import sys`). Queries whose relevance scores are all 0 are left
out. Formats, as in Paddle 1.8: plain_txt -> (query id, relevance, features) of the top document; pointwise ->
(relevance, features) of the top document; pairwise (default) -> (array([1]), better doc features, worse doc
features) for every pair with different relevance; listwise -> (relevances [n, 1], features [n, 46]).
`shuffle` and `fill_missing` are accepted and unused, as in Paddle.
"""

import functools
import os
import sys

import numpy as np

from . import common

__all__ = ["train", "test", "Query", "QueryList", "gen_plain_txt", "gen_point", "gen_pair", "gen_list",
           "query_filter", "load_from_text"]

URL = "http://www.bigdatalab.ac.cn/benchmark/upload/download_source/7b6dbbe2-842c-11e4-a536-bcaec51b9163_MQ2007.rar"
MD5 = "7be1640ae95c6408dab0ae7207bdc706"


def fetch():
    return common.download(URL, "MQ2007", MD5)


def _data_dir():
    dirpath = os.path.join(common.DATA_HOME, "MQ2007")
    if os.path.isdir(os.path.join(dirpath, "MQ2007")):
        return dirpath
    rar_path = fetch()
    try:
        import rarfile   # kept in a function: an optional dependency, needed only to unpack this data set
    except ImportError:
        raise ImportError("paddle.dataset.mq2007: %s must be unpacked (into %s) and the `rarfile` package is not "
                          "installed; unpack it there or pip install rarfile" % (rar_path, dirpath)) from None
    rarfile.RarFile(rar_path).extractall(path=os.path.dirname(rar_path))
    return os.path.dirname(rar_path)


class Query:
    def __init__(self, query_id=-1, relevance_score=-1, feature_vector=None, description=""):
        self.query_id = query_id
        self.relevance_score = relevance_score
        self.feature_vector = [] if feature_vector is None else feature_vector
        self.description = description

    def __str__(self):
        return "%s %s %s" % (self.relevance_score, self.query_id, " ".join(str(f) for f in self.feature_vector))

    def _parse_(self, text):
        cut = text.find("#")
        parts = text[:cut].strip().split()
        self.description = text[cut + 1:].strip()
        if len(parts) != 48:
            sys.stdout.write("expect 48 space split parts, get %d" % len(parts))
            return None
        self.relevance_score = int(parts[0])
        self.query_id = int(parts[1].split(":")[1])
        self.feature_vector.extend(float(p.split(":")[1]) for p in parts[2:])
        return self


class QueryList:
    def __init__(self, querylist=None):
        self.query_id = -1
        self.querylist = [] if querylist is None else querylist
        for query in self.querylist:
            self._check(query)

    def _check(self, query):
        if self.query_id == -1:
            self.query_id = query.query_id
        elif self.query_id != query.query_id:
            raise ValueError("query in list must be same query_id")

    def __iter__(self):
        return iter(self.querylist)

    def __len__(self):
        return len(self.querylist)

    def __getitem__(self, i):
        return self.querylist[i]

    def _correct_ranking_(self):
        self.querylist.sort(key=lambda q: q.relevance_score, reverse=True)

    def _add_query(self, query):
        self._check(query)
        self.querylist.append(query)


def _ranked(querylist):
    if not isinstance(querylist, QueryList):
        querylist = QueryList(querylist)
    querylist._correct_ranking_()
    return querylist


def gen_plain_txt(querylist):
    querylist = _ranked(querylist)
    for query in querylist:
        yield querylist.query_id, query.relevance_score, np.array(query.feature_vector)


def gen_point(querylist):
    for query in _ranked(querylist):
        yield query.relevance_score, np.array(query.feature_vector)


def gen_pair(querylist, partial_order="full"):
    querylist = _ranked(querylist)
    for i in range(len(querylist)):
        left = querylist[i]
        for j in range(i + 1, len(querylist)):
            right = querylist[j]
            if left.relevance_score == right.relevance_score:
                continue
            better, worse = (left, right) if left.relevance_score > right.relevance_score else (right, left)
            yield np.array([1]), np.array(better.feature_vector), np.array(worse.feature_vector)


def gen_list(querylist):
    querylist = _ranked(querylist)
    yield (np.array([[q.relevance_score] for q in querylist]), np.array([q.feature_vector for q in querylist]))


def query_filter(querylists):
    return [ql for ql in querylists if sum(q.relevance_score for q in ql) != .0]


def load_from_text(filepath, shuffle=False, fill_missing=-1):
    querylists, querylist, prev = [], None, -1
    with open(os.path.join(_data_dir(), filepath)) as f:
        for line in f:
            query = Query()._parse_(line)
            if query is None:
                continue
            if query.query_id != prev:
                if querylist is not None:
                    querylists.append(querylist)
                querylist, prev = QueryList(), query.query_id
            querylist._add_query(query)
    if querylist is not None:
        querylists.append(querylist)
    return querylists


_FORMATS = {"plain_txt": gen_plain_txt, "pointwise": gen_point, "listwise": gen_list}


def __reader__(filepath, format="pairwise", shuffle=False, fill_missing=-1):
    if format not in ("pairwise",) + tuple(_FORMATS):
        raise ValueError("mq2007: format must be plain_txt, pointwise, pairwise or listwise, got %r" % (format,))
    for querylist in query_filter(load_from_text(filepath, shuffle=shuffle, fill_missing=fill_missing)):
        if format == "pairwise":
            yield from gen_pair(querylist)
        else:
            yield next(_FORMATS[format](querylist))   # Paddle yields the first item only


train = functools.partial(__reader__, filepath="MQ2007/MQ2007/Fold1/train.txt")
test = functools.partial(__reader__, filepath="MQ2007/MQ2007/Fold1/test.txt")
