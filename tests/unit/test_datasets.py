"""paddle.dataset readers: samples equal Paddle 1.8.5's on small files in the real formats
(tests/data/paddle18/datasets.json, made by make_datasets.py), and missing files are named."""

import importlib
import json
import math
import os
import sys

import pytest

import paddle_compat.dataset as ds
from paddle_compat.dataset import common

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
sys.path.insert(0, DATA)
import dataset_files  # noqa: E402
import make_datasets  # noqa: E402


@pytest.fixture
def data_home(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "DATA_HOME", str(tmp_path))
    # module-level caches (as in Paddle) would keep another test's files
    monkeypatch.setattr(ds.uci_housing, "UCI_TRAIN_DATA", None)
    monkeypatch.setattr(ds.uci_housing, "UCI_TEST_DATA", None)
    monkeypatch.setattr(ds.movielens, "MOVIE_INFO", None)
    return tmp_path


def _same(a, b, path="sample"):
    if isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), "%s: %r != %r" % (path, a, b)
    elif isinstance(a, dict):
        assert sorted(a) == sorted(b), path
        for k in a:
            _same(a[k], b[k], "%s.%s" % (path, k))
    elif isinstance(a, list):
        assert len(a) == len(b), "%s: %d items != %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, "%s[%d]" % (path, i))
    else:
        assert a == b, "%s: %r != %r" % (path, a, b)


def test_samples_equal_paddle18(data_home):
    dataset_files.write_all(str(data_home))
    ours = json.loads(json.dumps(make_datasets.collect(ds)))
    with open(os.path.join(DATA, "datasets.json")) as f:
        ref = json.load(f)
    assert sorted(ours) == sorted(ref)
    for name in ref:
        _same(ours[name], ref[name], name)


def test_sample_types(data_home):
    dataset_files.write_all(str(data_home))
    img, label = next(ds.mnist.train()())
    assert img.dtype.name == "float32" and img.shape == (784,) and -1.0 <= img.min() and img.max() <= 1.0
    assert isinstance(label, int)
    x, y = next(ds.uci_housing.train()())
    assert x.shape == (13,) and y.shape == (1,) and x.dtype.name == "float64"
    img, label = next(ds.cifar.train10()())
    assert img.dtype.name == "float32" and img.shape == (3072,) and 0.0 <= img.min() and img.max() <= 1.0


def test_missing_file_names_path_and_url(data_home):
    with pytest.raises(FileNotFoundError) as e:
        ds.mnist.train()
    msg = str(e.value)
    assert os.path.join(str(data_home), "mnist", "train-images-idx3-ubyte.gz") in msg
    assert "https://dataset.bj.bcebos.com/mnist/train-images-idx3-ubyte.gz" in msg
    with pytest.raises(common.DatasetFileMissing, match=r"conll05st%2FwordDict\.txt"):
        ds.conll05.test()


def test_data_home_is_read_at_call_time(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "DATA_HOME", str(tmp_path))
    (tmp_path / "imdb").mkdir()
    (tmp_path / "imdb" / "imdb%2FaclImdb_v1.tar.gz").write_bytes(b"")
    assert common.download(ds.imdb.URL, "imdb", ds.imdb.MD5) == str(tmp_path / "imdb" / "imdb%2FaclImdb_v1.tar.gz")


def test_imikolov_tie_between_word_and_mark_is_ordered(data_home):
    # Paddle 1.8 raises TypeError sorting a bytes word and '<s>' of equal count; we order them as bytes
    import collections
    from paddle_compat.dataset._vocab import ids_by_frequency
    freq = collections.Counter({b"zebra": 2, "<s>": 2, b"apple": 2, b"x": 5})
    idx = ids_by_frequency(freq, 0)
    assert [w for w, _ in sorted(idx.items(), key=lambda kv: kv[1])] == [b"x", "<s>", b"apple", b"zebra", "<unk>"]


def test_wmt16_dict_is_cached_where_paddle_caches_it(data_home):
    dataset_files.write_all(str(data_home))
    next(ds.wmt16.train(6, 7)())
    assert (data_home / "wmt16" / "en_6.dict").read_bytes().split(b"\n")[:3] == [b"<s>", b"<e>", b"<unk>"]
    assert ds.wmt16.get_dict("en", 6, reverse=True)[2] == "<unk>"
    with pytest.raises(ValueError, match="src_lang"):
        ds.wmt16.train(6, 7, src_lang="fr")


def test_flowers_names_missing_file_or_dependency(data_home):
    with pytest.raises(common.DatasetFileMissing, match="102flowers.tgz"):
        ds.flowers.train()
    for name in ("102flowers.tgz", "imagelabels.mat", "setid.mat"):
        (data_home / "flowers").mkdir(exist_ok=True)
        (data_home / "flowers" / name).write_bytes(b"")
    if importlib.util.find_spec("scipy") is None:
        with pytest.raises(ImportError, match="scipy"):
            ds.flowers.test()


def test_importing_datasets_does_not_load_torch():
    import subprocess
    code = "import sys, paddle_compat.dataset, paddle_compat.readers; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr
