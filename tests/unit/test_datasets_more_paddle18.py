"""paddle.dataset.sentiment, mq2007 and voc2012 against Paddle 1.8.5 on small files in their formats
(tests/data/paddle18/make_datasets_more.py). Paddle 1.8.5's voc2012 fails on Python 3 (KeyError: it looks the
files up under bytes names); ours reads them, decoded as Pillow does."""

import base64
import importlib.util
import json
import os

import numpy as np
import pytest

import paddle.dataset as ds
from paddle_compat.dataset import _png

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "datasets_more.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_datasets_more", os.path.join(DATA, "make_datasets_more.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)
JPEG = base64.b64decode(REF["jpeg"])
HAVE_DECODER = any(importlib.util.find_spec(m) is not None for m in ("PIL", "cv2"))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    MK.write_files(str(tmp_path), JPEG)
    monkeypatch.setattr(ds.common, "DATA_HOME", str(tmp_path))
    return tmp_path


def test_sentiment_matches_paddle18(cache):
    want = REF["sentiment"]
    assert [list(p) for p in ds.sentiment.get_word_dict()] == want["dict"]
    assert MK._plain(list(ds.sentiment.train())) == want["train"]
    assert MK._plain(list(ds.sentiment.test())) == want["test"]


@pytest.mark.parametrize("split", ["train", "test"])
@pytest.mark.parametrize("fmt", ["plain_txt", "pointwise", "pairwise", "listwise"])
def test_mq2007_matches_paddle18(cache, split, fmt):
    got = MK._plain(list(getattr(ds.mq2007, split)(format=fmt)))
    assert got == REF["mq2007/%s/%s" % (split, fmt)]


def test_mq2007_skips_a_short_line(cache, capsys):
    path = cache / "MQ2007" / "MQ2007" / "MQ2007" / "Fold1" / "train.txt"
    with open(path, "a") as f:
        f.write("2 qid:999 1:0.5 #too short\n")
    assert MK._plain(list(ds.mq2007.train(format="plain_txt"))) == REF["mq2007/train/plain_txt"]
    assert "expect 48 space split parts, get 3" in capsys.readouterr().out


def test_voc2012_reads_what_paddle18_could_not(cache):
    assert all(REF["voc2012/" + s] == "error: KeyError" for s in ("train", "test", "val"))
    reader = ds.voc2012.val()
    if not HAVE_DECODER:
        with pytest.raises(ImportError, match="Pillow.*opencv-python"):
            next(reader())
        return
    (img, label), = list(reader())
    exp = REF["voc2012_expected_image"]
    assert list(img.shape) == exp["shape"]
    assert np.abs(img.astype(int).ravel() - np.array(exp["data"])).max() <= 3
    assert label.shape == (6, 8) and label.dtype == np.uint8


def test_voc2012_labels_are_palette_indices(cache):
    rs = np.random.RandomState(1)
    labels = rs.randint(0, 21, (5, 7))
    png = MK._png_palette(labels)
    np.testing.assert_array_equal(ds.voc2012._decode(png), labels)
    np.testing.assert_array_equal(_png.decode(png, expand_palette=True)[..., 0], (labels * 3) % 251)


def test_missing_files_say_where_they_go(tmp_path, monkeypatch):
    monkeypatch.setattr(ds.common, "DATA_HOME", str(tmp_path))
    with pytest.raises(ds.common.DatasetFileMissing, match="movie_reviews.zip"):
        ds.sentiment.get_word_dict()
    with pytest.raises(ds.common.DatasetFileMissing, match="VOCtrainval_11-May-2012.tar"):
        ds.voc2012.train()
    with pytest.raises(ds.common.DatasetFileMissing, match="MQ2007.rar"):
        list(ds.mq2007.train())
