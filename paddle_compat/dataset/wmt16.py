"""paddle.dataset.wmt16: (src ids, trg ids, trg next ids) from Paddle's tokenised Multi30K wmt16.tar.gz.

Dictionaries are built from wmt16/train as Paddle does ('<s>', '<e>', '<unk>' then words by descending
count, ties in first-seen order, dict_size entries in all) and cached in DATA_HOME/wmt16/<lang>_<size>.dict,
the file Paddle writes, so either reads the other's.
"""

import collections
import os
import tarfile

from . import common

__all__ = ["train", "test", "validation", "fetch", "get_dict"]

DATA_URL = "http://paddlemodels.bj.bcebos.com/wmt/wmt16.tar.gz"
DATA_MD5 = "0c38be43600334966403524a40dcd81e"
TOTAL_EN_WORDS = 11250
TOTAL_DE_WORDS = 19220
START_MARK = "<s>"
END_MARK = "<e>"
UNK_MARK = "<unk>"


def _build_dict(tar_file, dict_size, save_path, lang):
    word_freq = collections.defaultdict(int)
    with tarfile.open(tar_file, mode="r") as f:
        for line in f.extractfile("wmt16/train"):
            parts = line.decode().strip().split("\t")
            if len(parts) != 2:
                continue
            for w in (parts[0] if lang == "en" else parts[1]).split():
                word_freq[w] += 1
    os.makedirs(os.path.dirname(save_path), exist_ok=True)
    with open(save_path, "wb") as out:
        out.write(("%s\n%s\n%s\n" % (START_MARK, END_MARK, UNK_MARK)).encode())
        for idx, (word, _) in enumerate(sorted(word_freq.items(), key=lambda x: x[1], reverse=True)):
            if idx + 3 == dict_size:
                break
            out.write(word.encode() + b"\n")


def _load_dict(tar_file, dict_size, lang, reverse=False):
    dict_path = os.path.join(common.DATA_HOME, "wmt16/%s_%d.dict" % (lang, dict_size))
    if not os.path.exists(dict_path) or len(open(dict_path, "rb").readlines()) != dict_size:
        _build_dict(tar_file, dict_size, dict_path, lang)
    with open(dict_path, "rb") as f:
        words = [line.strip().decode() for line in f]
    return dict(enumerate(words)) if reverse else {w: i for i, w in enumerate(words)}


def _dict_sizes(src_dict_size, trg_dict_size, src_lang):
    en_src = src_lang == "en"
    return (min(src_dict_size, TOTAL_EN_WORDS if en_src else TOTAL_DE_WORDS),
            min(trg_dict_size, TOTAL_DE_WORDS if en_src else TOTAL_EN_WORDS))


def reader_creator(tar_file, file_name, src_dict_size, trg_dict_size, src_lang):
    def reader():
        src_dict = _load_dict(tar_file, src_dict_size, src_lang)
        trg_dict = _load_dict(tar_file, trg_dict_size, "de" if src_lang == "en" else "en")
        # Paddle takes the marks' ids from the source dictionary for both sides (they are 0, 1, 2 in both)
        start_id, end_id, unk_id = src_dict[START_MARK], src_dict[END_MARK], src_dict[UNK_MARK]
        src_col = 0 if src_lang == "en" else 1
        with tarfile.open(tar_file, mode="r") as f:
            for line in f.extractfile(file_name):
                parts = line.decode().strip().split("\t")
                if len(parts) != 2:
                    continue
                src_ids = [start_id] + [src_dict.get(w, unk_id) for w in parts[src_col].split()] + [end_id]
                trg_ids = [trg_dict.get(w, unk_id) for w in parts[1 - src_col].split()]
                yield src_ids, [start_id] + trg_ids, trg_ids + [end_id]
    return reader


def _make(file_name, src_dict_size, trg_dict_size, src_lang):
    if src_lang not in ("en", "de"):
        raise ValueError("wmt16: src_lang must be 'en' (English) or 'de' (German), got %r" % (src_lang,))
    src_dict_size, trg_dict_size = _dict_sizes(src_dict_size, trg_dict_size, src_lang)
    return reader_creator(common.download(DATA_URL, "wmt16", DATA_MD5, "wmt16.tar.gz"), file_name,
                          src_dict_size, trg_dict_size, src_lang)


def train(src_dict_size, trg_dict_size, src_lang="en"):
    return _make("wmt16/train", src_dict_size, trg_dict_size, src_lang)


def test(src_dict_size, trg_dict_size, src_lang="en"):
    return _make("wmt16/test", src_dict_size, trg_dict_size, src_lang)


def validation(src_dict_size, trg_dict_size, src_lang="en"):
    return _make("wmt16/val", src_dict_size, trg_dict_size, src_lang)


def get_dict(lang, dict_size, reverse=False):
    dict_size = min(dict_size, TOTAL_EN_WORDS if lang == "en" else TOTAL_DE_WORDS)
    dict_path = os.path.join(common.DATA_HOME, "wmt16/%s_%d.dict" % (lang, dict_size))
    if not os.path.exists(dict_path):
        raise FileNotFoundError("wmt16 word dictionary %s does not exist: call paddle.dataset.wmt16."
                                "train/test/validation first to build it" % dict_path)
    # Paddle passes DATA_HOME/wmt16.tar.gz here, used only if the dictionary must be rebuilt
    tar_file = common.cached_path(DATA_URL, "wmt16", "wmt16.tar.gz")
    return _load_dict(tar_file, dict_size, lang, reverse)


def fetch():
    common.download(DATA_URL, "wmt16", DATA_MD5, "wmt16.tar.gz")
