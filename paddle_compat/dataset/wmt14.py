"""paddle.dataset.wmt14: (src ids, trg ids, trg next ids) from Paddle's shrunk wmt14.tgz.

Dictionaries are the first `dict_size` lines of the archive's *src.dict / *trg.dict; pairs longer than 80
ids are dropped, as in Paddle.
"""

import tarfile

from . import common

__all__ = ["train", "test", "get_dict"]

URL_DEV_TEST = "http://www-lium.univ-lemans.fr/~schwenk/cslm_joint_paper/data/dev+test.tgz"
MD5_DEV_TEST = "7d7897317ddd8ba0ae5c5fa7248d3ff5"
URL_TRAIN = "http://paddlemodels.bj.bcebos.com/wmt/wmt14.tgz"
MD5_TRAIN = "0791583d57d5beb693b9414c5b36798c"
URL_MODEL = "http://paddlemodels.bj.bcebos.com/wmt%2Fwmt14.tgz"
MD5_MODEL = "0cb4a5366189b6acba876491c8724fa3"

START = "<s>"
END = "<e>"
UNK = "<unk>"
UNK_IDX = 2


def _read_dicts(tar_file, dict_size):
    def first_lines(fd):
        out = {}
        for i, line in enumerate(fd):
            if i >= dict_size:
                break
            out[line.strip().decode()] = i
        return out

    dicts = []
    with tarfile.open(tar_file, mode="r") as f:
        for suffix in ("src.dict", "trg.dict"):
            names = [m.name for m in f if m.name.endswith(suffix)]
            if len(names) != 1:
                raise ValueError("%s: expected one member ending in %s, found %s" % (tar_file, suffix, names))
            dicts.append(first_lines(f.extractfile(names[0])))
    return dicts[0], dicts[1]


def reader_creator(tar_file, file_name, dict_size):
    def reader():
        src_dict, trg_dict = _read_dicts(tar_file, dict_size)
        with tarfile.open(tar_file, mode="r") as f:
            for name in [m.name for m in f if m.name.endswith(file_name)]:
                for line in f.extractfile(name):
                    parts = line.decode().strip().split("\t")
                    if len(parts) != 2:
                        continue
                    src_ids = [src_dict.get(w, UNK_IDX) for w in [START] + parts[0].split() + [END]]
                    trg_ids = [trg_dict.get(w, UNK_IDX) for w in parts[1].split()]
                    if len(src_ids) > 80 or len(trg_ids) > 80:
                        continue
                    yield src_ids, [trg_dict[START]] + trg_ids, trg_ids + [trg_dict[END]]
    return reader


def train(dict_size):
    return reader_creator(common.download(URL_TRAIN, "wmt14", MD5_TRAIN), "train/train", dict_size)


def test(dict_size):
    return reader_creator(common.download(URL_TRAIN, "wmt14", MD5_TRAIN), "test/test", dict_size)


def gen(dict_size):
    return reader_creator(common.download(URL_TRAIN, "wmt14", MD5_TRAIN), "gen/gen", dict_size)


def get_dict(dict_size, reverse=True):
    src_dict, trg_dict = _read_dicts(common.download(URL_TRAIN, "wmt14", MD5_TRAIN), dict_size)
    if reverse:
        src_dict = {v: k for k, v in src_dict.items()}
        trg_dict = {v: k for k, v in trg_dict.items()}
    return src_dict, trg_dict


def fetch():
    common.download(URL_TRAIN, "wmt14", MD5_TRAIN)
    common.download(URL_MODEL, "wmt14", MD5_MODEL)
