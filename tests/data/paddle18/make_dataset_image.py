"""Paddle 1.8.5's paddle.dataset.image on small images (decoding, resize, crops, flips, transforms, tar batches).
Record (outside CI; Paddle's module needs OpenCV, and Pillow writes the test images) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_dataset_image.py

run_all(image_module, workdir, encoded) runs unchanged on paddle_compat in tests/unit/test_dataset_image_paddle18.py.
"""

import base64
import io
import json
import os
import pickle
import tarfile
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _pixels():
    rs = np.random.RandomState(4)
    yy, xx = np.mgrid[0:19, 0:27]
    base = np.stack([xx * 9, yy * 13, (xx + yy) * 5], axis=2) + rs.randint(0, 40, (19, 27, 3))
    return np.clip(base, 0, 255).astype(np.uint8)


def encode_images():
    """The test images, encoded with Pillow: {name: bytes}."""
    from PIL import Image
    px = _pixels()
    out = {}
    for name, im, fmt in [("rgb.png", Image.fromarray(px), "PNG"), ("gray.png", Image.fromarray(px[:, :, 1]), "PNG"),
                          ("pal.png", Image.fromarray(px).convert("P", palette=Image.ADAPTIVE, colors=16), "PNG"),
                          ("rgba.png", Image.fromarray(np.dstack([px, px[:, :, :1]])), "PNG"),
                          ("photo.jpg", Image.fromarray(px), "JPEG")]:
        buf = io.BytesIO()
        im.save(buf, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
        out[name] = buf.getvalue()
    return out


def _arr(a):
    a = np.asarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.ravel().tolist()}


def run_all(image, workdir, encoded):
    r = {}
    for name, data in sorted(encoded.items()):
        path = os.path.join(workdir, name)
        with open(path, "wb") as f:
            f.write(data)
        r["bytes_color/" + name] = _arr(image.load_image_bytes(data))
        r["bytes_gray/" + name] = _arr(image.load_image_bytes(data, is_color=False))
        r["file_color/" + name] = _arr(image.load_image(path))
    im = image.load_image(os.path.join(workdir, "rgb.png"))
    gray = image.load_image(os.path.join(workdir, "gray.png"), is_color=False)
    r["resize_down"] = _arr(image.resize_short(im, 10))
    r["resize_up"] = _arr(image.resize_short(im, 33))
    r["resize_gray"] = _arr(image.resize_short(gray, 12))
    r["to_chw"] = _arr(image.to_chw(im))
    r["center_crop"] = _arr(image.center_crop(im, 8))
    r["center_crop_gray"] = _arr(image.center_crop(gray, 7, is_color=False))
    np.random.seed(3)
    r["random_crop"] = _arr(image.random_crop(im, 9))
    r["random_crop_gray"] = _arr(image.random_crop(gray, 5, is_color=False))
    r["flip"] = _arr(image.left_right_flip(im))
    r["flip_gray"] = _arr(image.left_right_flip(gray, is_color=False))
    np.random.seed(5)
    r["simple_train"] = [_arr(image.simple_transform(im, 16, 12, True, mean=[103.94, 116.78, 123.68]))
                         for _ in range(3)]
    r["simple_test"] = _arr(image.simple_transform(im, 16, 12, False))
    r["simple_gray"] = _arr(image.simple_transform(gray, 14, 10, False, is_color=False, mean=[7.0]))
    np.random.seed(6)
    r["load_and_transform"] = _arr(image.load_and_transform(os.path.join(workdir, "rgb.png"), 20, 16, True))
    r["np_after"] = int(np.random.randint(1 << 30))
    tar_path = os.path.join(workdir, "imgs.tar")
    with tarfile.open(tar_path, "w") as tf:
        for name in ("rgb.png", "gray.png", "photo.jpg", "pal.png"):
            tf.add(os.path.join(workdir, name), arcname="jpg/" + name)
    meta = image.batch_images_from_tar(tar_path, "train", {"jpg/rgb.png": 1, "jpg/photo.jpg": 0,
                                                           "jpg/pal.png": 2}, num_per_batch=2)
    again = image.batch_images_from_tar(tar_path, "train", {}, num_per_batch=2)
    lines = open(meta).read().split()
    batches = []
    for line in sorted(lines):
        with open(line, "rb") as f:
            b = pickle.load(f)
        batches.append({"label": b["label"], "data": [base64.b64encode(d).decode() for d in b["data"]]})
    r["tar"] = {"meta": os.path.relpath(meta, workdir), "again": again == meta,
                "files": sorted(os.path.relpath(p, workdir) for p in lines), "batches": batches}
    return r


if __name__ == "__main__":
    import paddle.dataset.image as image
    enc = encode_images()
    with tempfile.TemporaryDirectory() as tmp:
        rec = run_all(image, tmp, enc)
    rec["encoded"] = {k: base64.b64encode(v).decode() for k, v in enc.items()}
    with open(os.path.join(HERE, "dataset_image.json"), "w") as fh:
        json.dump(rec, fh, sort_keys=True)
    print("wrote", len(rec))
