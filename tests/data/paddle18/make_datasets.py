"""Records Paddle 1.8.5's paddle.dataset samples on the small files dataset_files.py writes, into datasets.json.

Run outside CI with Paddle's interpreter:
    GLOG_v=0 OMP_NUM_THREADS=1 /work/paddle18/bin/python tests/data/paddle18/make_datasets.py
tests/unit/test_datasets.py runs collect() on this project's readers and compares.  Paddle numbers movielens
title words / categories and conll05 tags in (hash-randomised) set order, so those ids are recorded as the
words they stand for.
"""

import json
import os
import re
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dataset_files  # noqa: E402


def plain(x):
    """JSON-able form of a sample: arrays become dtype/shape/sum/first values, bytes keep their type."""
    if isinstance(x, np.ndarray):
        flat = x.ravel()
        return {"dtype": str(x.dtype), "shape": list(x.shape), "sum": float(flat.astype(np.float64).sum()),
                "head": [float(v) for v in flat[:8]]}
    if isinstance(x, bytes):
        return "b:" + x.decode("latin-1")
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return sorted([plain(k), plain(v)] for k, v in x.items())
    if isinstance(x, (np.integer, int)) and not isinstance(x, bool):
        return ["int", int(x)]
    if isinstance(x, (np.floating, float)):
        return ["float", float(x)]
    return x


def samples(reader, limit=None):
    out = []
    for i, s in enumerate(reader()):
        if limit is not None and i >= limit:
            break
        out.append(plain(s))
    return out


def collect(ds):
    """Samples of every reader of `ds` (a paddle.dataset package) over the files under ds.common.DATA_HOME."""
    r = {}
    r["uci_housing"] = {"train": samples(ds.uci_housing.train()), "test": samples(ds.uci_housing.test())}
    r["mnist"] = {"train": samples(ds.mnist.train()), "test": samples(ds.mnist.test(), 5)}
    r["cifar"] = {k: samples(getattr(ds.cifar, k)()) for k in ("train10", "test10", "train100", "test100")}

    pattern = re.compile(r"aclImdb/((train)|(test))/((pos)|(neg))/.*\.txt$")
    wd = ds.imdb.build_dict(pattern, 1)
    r["imdb"] = {"dict": plain(wd), "train": samples(ds.imdb.train(wd)), "test": samples(ds.imdb.test(wd))}

    d = ds.imikolov.build_dict(1)
    seq = ds.imikolov.DataType.SEQ
    r["imikolov"] = {"dict": plain(d), "train3": samples(ds.imikolov.train(d, 3), 300),
                     "dict50": plain(ds.imikolov.build_dict()),
                     "test5seq": samples(ds.imikolov.test(d, 5, seq)), "train0seq": samples(ds.imikolov.train(d, 0, seq), 50)}

    ml = ds.movielens
    titles = {v: k for k, v in ml.get_movie_title_dict().items()}
    cats = {v: k for k, v in ml.movie_categories().items()}

    def ml_words(reader):
        return [s[:5] + [[cats[c] for c in s[5]], [titles[t] for t in s[6]], s[7]] for s in reader()]
    r["movielens"] = {"train": plain(ml_words(ml.train())), "test": plain(ml_words(ml.test())),
                      "test_seed3": plain(ml_words(ml.test(rand_seed=3, test_ratio=0.5))),
                      "max": [ml.max_movie_id(), ml.max_user_id(), ml.max_job_id()],
                      "titles": sorted(titles.values()), "categories": sorted(cats.values()),
                      "users": sorted(str(u) for u in ml.user_info().values()),
                      "movies": sorted(str(m) for m in ml.movie_info().values())}

    word_dict, verb_dict, label_dict = ds.conll05.get_dict()
    labels = {v: k for k, v in label_dict.items()}
    r["conll05"] = {"word_dict": plain(word_dict), "verb_dict": plain(verb_dict),
                    "label_names": sorted(label_dict), "label_O_last": label_dict["O"] == len(label_dict) - 1,
                    "test": [plain(list(s[:8]) + [[labels[i] for i in s[8]]]) for s in ds.conll05.test()()]}

    r["wmt14"] = {"train": samples(ds.wmt14.train(8)), "test": samples(ds.wmt14.test(6)),
                  "gen": samples(ds.wmt14.gen(8)), "dict": plain(ds.wmt14.get_dict(7)),
                  "dict_fwd": plain(ds.wmt14.get_dict(9, reverse=False))}

    w = ds.wmt16
    r["wmt16"] = {"train": samples(w.train(6, 7)), "test_de": samples(w.test(8, 5, "de")),
                  "val": samples(w.validation(30, 30)), "dict_en": plain(w.get_dict("en", 6)),
                  "dict_de_rev": plain(w.get_dict("de", 7, reverse=True))}
    return r


def main():
    import paddle.dataset as ds
    root = tempfile.mkdtemp(prefix="p18ds-")
    dataset_files.write_all(root)
    ds.common.DATA_HOME = root

    def cached(url, module_name, md5sum, save_name=None):
        # Paddle's download() re-fetches files whose md5 differs from the real dataset's; these small files
        # always differ, so hand Paddle's readers the cached path directly (no network here either)
        return os.path.join(root, module_name, save_name or url.split("/")[-1])
    ds.common.download = cached
    cwd = os.getcwd()
    os.chdir(root)   # Paddle's uci_housing writes ./image/ranges.png
    try:
        result = collect(ds)
    finally:
        os.chdir(cwd)
    with open(os.path.join(HERE, "datasets.json"), "w") as f:
        json.dump(result, f, indent=0, sort_keys=True)
    print("wrote", os.path.join(HERE, "datasets.json"))


if __name__ == "__main__":
    main()
