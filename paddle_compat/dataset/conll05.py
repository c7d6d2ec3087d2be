"""paddle.dataset.conll05: CoNLL-2005 SRL test set samples as Paddle 1.8 yields them (nine id lists:
words, ctx_n2, ctx_n1, ctx_0, ctx_p1, ctx_p2, predicate, mark, labels).

The label dictionary holds B-/I- ids per tag then 'O'; Paddle numbers the tags in Python set order, which
changes between processes (string hashing); we number them in sorted tag order so ids are stable.
"""

import gzip
import tarfile

from . import common

__all__ = ["test", "get_dict", "get_embedding"]

DATA_URL = "http://paddlemodels.bj.bcebos.com/conll05st/conll05st-tests.tar.gz"
DATA_MD5 = "387719152ae52d60422c016e92a742fc"
WORDDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FwordDict.txt"
WORDDICT_MD5 = "ea7fb7d4c75cc6254716f0177a506baa"
VERBDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FverbDict.txt"
VERBDICT_MD5 = "0d2977293bbb6cbefab5b0f97db1e77c"
TRGDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FtargetDict.txt"
TRGDICT_MD5 = "d8c7f03ceb5fc2e5a0fa7503a4353751"
EMB_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2Femb"
EMB_MD5 = "bf436eb0faa1f6f9103017f8be57cdb7"
UNK_IDX = 0


def load_label_dict(filename):
    tags = set()
    with open(filename, "r") as f:
        for line in f:
            line = line.strip()
            if line.startswith("B-") or line.startswith("I-"):
                tags.add(line[2:])
    d = {}
    for tag in sorted(tags):
        d["B-" + tag] = len(d)
        d["I-" + tag] = len(d)
    d["O"] = len(d)
    return d


def load_dict(filename):
    with open(filename, "r") as f:
        return {line.strip(): i for i, line in enumerate(f)}


def _bracket_labels(lbl):
    """One predicate's column of bracketed args ('(A0*', '*', '*)', '(V*)') as B-/I-/O tags."""
    cur_tag, in_bracket, seq = "O", False, []
    for tok in lbl:
        if tok == "*":
            seq.append("I-" + cur_tag if in_bracket else "O")
        elif tok == "*)":
            seq.append("I-" + cur_tag)
            in_bracket = False
        elif "(" in tok:
            cur_tag = tok[1:tok.find("*")]
            seq.append("B-" + cur_tag)
            in_bracket = ")" not in tok
        else:
            raise RuntimeError("Unexpected label: %s" % tok)
    return seq


def corpus_reader(data_path, words_name, props_name):
    def reader():
        with tarfile.open(data_path) as tf:
            with gzip.GzipFile(fileobj=tf.extractfile(words_name)) as words_file, \
                    gzip.GzipFile(fileobj=tf.extractfile(props_name)) as props_file:
                sentences, one_seg = [], []
                for word, label in zip(words_file, props_file):
                    word = word.strip().decode()
                    label = label.strip().decode().split()
                    if label:
                        sentences.append(word)
                        one_seg.append(label)
                        continue
                    # end of sentence: column 0 holds the verbs, each further column one predicate's args
                    columns = [[x[i] for x in one_seg] for i in range(len(one_seg[0]))] if one_seg else []
                    if columns:
                        verbs = [x for x in columns[0] if x != "-"]
                        for i, lbl in enumerate(columns[1:]):
                            yield sentences, verbs[i], _bracket_labels(lbl)
                    sentences, one_seg = [], []
    return reader


def reader_creator(corpus_reader, word_dict=None, predicate_dict=None, label_dict=None):
    def reader():
        for sentence, predicate, labels in corpus_reader():
            n = len(sentence)
            v = labels.index("B-V")
            mark = [0] * len(labels)
            for k in (v - 2, v - 1, v, v + 1, v + 2):
                if 0 <= k < len(labels):
                    mark[k] = 1
            ctx_n2 = sentence[v - 2] if v > 1 else "bos"
            ctx_n1 = sentence[v - 1] if v > 0 else "bos"
            ctx_0 = sentence[v]
            ctx_p1 = sentence[v + 1] if v < len(labels) - 1 else "eos"
            ctx_p2 = sentence[v + 2] if v < len(labels) - 2 else "eos"
            word_idx = [word_dict.get(w, UNK_IDX) for w in sentence]
            ctx = [[word_dict.get(c, UNK_IDX)] * n for c in (ctx_n2, ctx_n1, ctx_0, ctx_p1, ctx_p2)]
            pred_idx = [predicate_dict.get(predicate)] * n
            label_idx = [label_dict.get(w) for w in labels]
            yield (word_idx, ctx[0], ctx[1], ctx[2], ctx[3], ctx[4], pred_idx, mark, label_idx)
    return reader


def get_dict():
    word_dict = load_dict(common.download(WORDDICT_URL, "conll05st", WORDDICT_MD5))
    verb_dict = load_dict(common.download(VERBDICT_URL, "conll05st", VERBDICT_MD5))
    label_dict = load_label_dict(common.download(TRGDICT_URL, "conll05st", TRGDICT_MD5))
    return word_dict, verb_dict, label_dict


def get_embedding():
    return common.download(EMB_URL, "conll05st", EMB_MD5)


def test():
    word_dict, verb_dict, label_dict = get_dict()
    reader = corpus_reader(common.download(DATA_URL, "conll05st", DATA_MD5),
                           words_name="conll05st-release/test.wsj/words/test.wsj.words.gz",
                           props_name="conll05st-release/test.wsj/props/test.wsj.props.gz")
    return reader_creator(reader, word_dict, verb_dict, label_dict)


def fetch():
    for url, md5 in ((WORDDICT_URL, WORDDICT_MD5), (VERBDICT_URL, VERBDICT_MD5), (TRGDICT_URL, TRGDICT_MD5),
                     (EMB_URL, EMB_MD5), (DATA_URL, DATA_MD5)):
        common.download(url, "conll05st", md5)
