"""Paddle 1.8.5's paddle.dataset.sentiment, voc2012 and mq2007 on small files written here in their formats.
Record (outside CI; 1.8.5's sentiment needs nltk, voc2012 Pillow) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_datasets_more.py

write_files(root) and collect(dataset_package) run unchanged on paddle_compat in
tests/unit/test_datasets_more_paddle18.py.
"""

import base64
import io
import json
import os
import tarfile
import tempfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
WORDS = ["the", "film", "movie", "good", "bad", "plot", "it's", "great", "boring", "actor", "!", "...", "fun"]


def _png_palette(labels):
    """A palette PNG of class indices (written without Pillow: zlib + a PLTE chunk)."""
    import struct
    import zlib

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)
    h, w = labels.shape
    raw = b"".join(b"\x00" + bytes(row) for row in labels.astype(np.uint8))
    pal = bytes(np.arange(256 * 3, dtype=np.uint8) % 251)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0)) +
            chunk(b"PLTE", pal) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


# a small JPEG (8x6, made with Pillow) so that the files can be written without an encoder
_JPEG = None


def write_files(root, jpeg_bytes):
    rs = np.random.RandomState(9)
    os.makedirs(os.path.join(root, "corpora"), exist_ok=True)
    with zipfile.ZipFile(os.path.join(root, "corpora", "movie_reviews.zip"), "w") as zf:
        for cat in ("neg", "pos"):
            for k in range(3 if cat == "neg" else 4):
                lines = [" ".join(rs.choice(WORDS, rs.randint(3, 9))) for _ in range(rs.randint(1, 4))]
                zf.writestr("movie_reviews/%s/cv%03d_%d.txt" % (cat, k, rs.randint(10000)), "\n".join(lines) + "\n")
        zf.writestr("movie_reviews/README", "synthetic\n")
    os.makedirs(os.path.join(root, "voc2012"), exist_ok=True)
    with tarfile.open(os.path.join(root, "voc2012", "VOCtrainval_11-May-2012.tar"), "w") as tf:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        names = ["2007_000032", "2007_000039", "2008_000123"]
        for n in names:
            add("VOCdevkit/VOC2012/JPEGImages/%s.jpg" % n, jpeg_bytes)
            add("VOCdevkit/VOC2012/SegmentationClass/%s.png" % n, _png_palette(rs.randint(0, 21, (6, 8))))
        for sub, ns in (("trainval", names), ("train", names[:2]), ("val", names[2:])):
            add("VOCdevkit/VOC2012/ImageSets/Segmentation/%s.txt" % sub, ("\n".join(ns) + "\n").encode())
    fold = os.path.join(root, "MQ2007", "MQ2007", "MQ2007", "Fold1")   # where Paddle reads it
    os.makedirs(fold, exist_ok=True)
    for split, nq in (("train", 4), ("test", 2)):
        with open(os.path.join(fold, split + ".txt"), "w") as f:
            for q in range(nq):
                for d in range(rs.randint(2, 5)):
                    rel = 0 if q == 1 else rs.randint(0, 3)
                    feats = " ".join("%d:%.6f" % (i + 1, rs.rand()) for i in range(46))
                    f.write("%d qid:%d %s #docid = GX%03d inc = 1 prob = 0.5\n" % (rel, 100 + q, feats, d))


def _plain(v):
    if isinstance(v, np.ndarray):
        return {"dtype": str(v.dtype), "shape": list(v.shape), "data": v.ravel().tolist()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def collect(ds):
    out = {"sentiment": {"dict": ds.sentiment.get_word_dict(), "train": _plain(list(ds.sentiment.train())),
                         "test": _plain(list(ds.sentiment.test()))}}
    for split in ("train", "test", "val"):
        try:
            out["voc2012/" + split] = _plain(list(getattr(ds.voc2012, split)()()))
        except Exception as e:   # Paddle 1.8 on Python 3 looks the images up under b'...' names
            out["voc2012/" + split] = "error: %s" % type(e).__name__
    for split in ("train", "test"):
        for fmt in ("plain_txt", "pointwise", "pairwise", "listwise"):
            out["mq2007/%s/%s" % (split, fmt)] = _plain(list(getattr(ds.mq2007, split)(format=fmt)))
    return out


def main():
    import paddle.dataset as ds
    from PIL import Image
    buf = io.BytesIO()
    Image.fromarray(np.arange(8 * 6 * 3, dtype=np.uint8).reshape(6, 8, 3) * 2).save(buf, "JPEG", quality=95)
    jpeg = buf.getvalue()
    root = tempfile.mkdtemp(prefix="p18ds-")
    write_files(root, jpeg)
    ds.common.DATA_HOME = root

    def cached(url, module_name, md5sum=None, save_name=None):
        return os.path.join(root, module_name, save_name or url.split("/")[-1])
    ds.common.download = cached
    ds.sentiment.paddle.dataset.common.download = cached
    ds.voc2012.download = cached
    ds.mq2007.__initialize_meta_info__ = lambda: os.path.join(root, "MQ2007")
    rec = collect(ds)
    # what Paddle's voc2012 yields when it finds the files (the names decoded), for the decoded arrays
    from PIL import Image as _I
    rec["voc2012_expected_image"] = _plain(np.array(_I.open(io.BytesIO(jpeg))))
    rec["jpeg"] = base64.b64encode(jpeg).decode()
    with open(os.path.join(HERE, "datasets_more.json"), "w") as fh:
        json.dump(rec, fh, sort_keys=True)
    print("wrote", sorted(rec))


if __name__ == "__main__":
    main()
