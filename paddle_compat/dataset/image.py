"""paddle.dataset.image: Paddle 1.8's image helpers for dataset readers (load, resize, crop, flip, CHW).

Images are numpy arrays as OpenCV gives them: uint8 (H, W, 3) in BGR order for color, (H, W) for grayscale.
Paddle needs OpenCV (`cv2`) for decoding and resizing; here it is used when installed. Without it:
- decoding falls back to Pillow (channels reordered to BGR; gray from Pillow's "L" conversion, which may differ
  from OpenCV's by 1 level; JPEG decoders may differ by a level or two), then to a built-in PNG decoder (8-bit
  PNGs only; gray as OpenCV computes it, 0.299 R + 0.587 G + 0.114 B in its fixed point);
- resize_short resizes with torch's bicubic interpolation (a = -0.75, pixel centers aligned, as OpenCV's
  INTER_CUBIC), rounding to uint8; OpenCV computes 8-bit images in fixed point, so pixels may differ by 1 level.
Random crops and flips draw from numpy's global RNG exactly as Paddle does.
"""

import io
import os
import pickle
import tarfile

import numpy as np

from ..ir.lazy import F, torch
from . import _optional as optional, _png

__all__ = ["load_image_bytes", "load_image", "resize_short", "to_chw", "center_crop", "random_crop",
           "left_right_flip", "simple_transform", "load_and_transform", "batch_images_from_tar"]


def _cv2():
    return optional.cv2()


def batch_images_from_tar(data_file, dataset_name, img2label, num_per_batch=1024):
    """Pack the images of `data_file` (a tar) named in img2label into pickle batches ({'label': [...],
    'data': [image bytes, ...]}) under <data_file>_batch/<dataset_name>/batch_<i>, list them in
    <data_file>_batch/<dataset_name>.txt and return that file's path (at once, if the batches exist)."""
    batch_dir = data_file + "_batch"
    out_path = os.path.join(batch_dir, dataset_name)
    meta_file = os.path.join(batch_dir, dataset_name + ".txt")
    if os.path.exists(out_path):
        return meta_file
    os.makedirs(out_path)
    data, labels, file_id = [], [], 0

    def dump():
        with open(os.path.join(out_path, "batch_%d" % file_id), "wb") as f:
            pickle.dump({"label": labels, "data": data}, f, protocol=2)

    with tarfile.open(data_file) as tf:
        for mem in tf.getmembers():
            if mem.name in img2label:
                data.append(tf.extractfile(mem).read())
                labels.append(img2label[mem.name])
                if len(data) == num_per_batch:
                    dump()
                    file_id += 1
                    data, labels = [], []
    if data:
        dump()
    with open(meta_file, "a") as meta:
        for name in os.listdir(out_path):   # Paddle's order: the directory's
            meta.write(os.path.abspath(os.path.join(out_path, name)) + "\n")
    return meta_file


def _gray(bgr):
    """OpenCV's BGR -> gray for 8-bit images: (B*1868 + G*9617 + R*4899 + 8192) >> 14."""
    b, g, r = (bgr[..., i].astype(np.int32) for i in range(3))
    return ((b * 1868 + g * 9617 + r * 4899 + 8192) >> 14).astype(np.uint8)


def _decode_without_cv2(data, is_color):
    Image = optional.pil_image()
    if Image is not None:
        im = Image.open(io.BytesIO(bytes(data)))
        if is_color:
            return np.asarray(im.convert("RGB"))[:, :, ::-1].copy()
        return np.asarray(im.convert("L")).copy()
    if _png.is_png(data):
        img = _png.decode(data, expand_palette=True)
        if img.ndim == 2:
            return np.repeat(img[:, :, None], 3, axis=2) if is_color else img
        bgr = np.ascontiguousarray(img[:, :, 2::-1] if img.shape[2] >= 3 else np.repeat(img[:, :, :1], 3, axis=2))
        return bgr if is_color else _gray(bgr)
    raise ImportError("paddle.dataset.image: decoding this image needs opencv-python (as Paddle) or Pillow; "
                      "without them only 8-bit PNG files can be read")


def load_image_bytes(bytes, is_color=True):
    """Decode an encoded image (JPEG, PNG, ...) -> uint8 (H, W, 3) BGR, or (H, W) with is_color=False."""
    cv2 = _cv2()
    if cv2 is not None:
        return cv2.imdecode(np.asarray(bytearray(bytes), dtype=np.uint8), 1 if is_color else 0)
    return _decode_without_cv2(bytes, is_color)


def load_image(file, is_color=True):
    """Read an image file -> uint8 (H, W, 3) BGR, or (H, W) with is_color=False (OpenCV's imread)."""
    cv2 = _cv2()
    if cv2 is not None:
        return cv2.imread(file, 1 if is_color else 0)
    with open(file, "rb") as f:
        return _decode_without_cv2(f.read(), is_color)


def _resize_bicubic(im, w_new, h_new):
    x = torch.from_numpy(np.ascontiguousarray(im)).to(torch.float32)
    x = x[None, None] if x.dim() == 2 else x.permute(2, 0, 1)[None]
    y = F.interpolate(x, size=(h_new, w_new), mode="bicubic", align_corners=False)[0]
    y = y[0] if im.ndim == 2 else y.permute(1, 2, 0)
    if im.dtype == np.uint8:
        return torch.clamp(torch.round(y), 0, 255).to(torch.uint8).numpy()
    return y.numpy().astype(im.dtype)


def resize_short(im, size):
    """Resize so that the shorter side is `size` (bicubic), keeping the aspect ratio (integer division)."""
    h, w = im.shape[:2]
    h_new, w_new = size, size
    if h > w:
        h_new = size * h // w
    else:
        w_new = size * w // h
    cv2 = _cv2()
    if cv2 is not None:
        return cv2.resize(im, (w_new, h_new), interpolation=cv2.INTER_CUBIC)
    return _resize_bicubic(im, w_new, h_new)


def to_chw(im, order=(2, 0, 1)):
    if len(im.shape) != len(order):
        raise ValueError("to_chw: the image has %d dims, order %s has %d" % (len(im.shape), order, len(order)))
    return im.transpose(order)


def _crop(im, hs, ws, size, is_color):
    return im[hs:hs + size, ws:ws + size, :] if is_color else im[hs:hs + size, ws:ws + size]


def center_crop(im, size, is_color=True):
    h, w = im.shape[:2]
    return _crop(im, (h - size) // 2, (w - size) // 2, size, is_color)


def random_crop(im, size, is_color=True):
    h, w = im.shape[:2]
    hs = np.random.randint(0, h - size + 1)
    ws = np.random.randint(0, w - size + 1)
    return _crop(im, hs, ws, size, is_color)


def left_right_flip(im, is_color=True):
    if len(im.shape) == 3 and is_color:
        return im[:, ::-1, :]
    return im[:, ::-1]


def simple_transform(im, resize_size, crop_size, is_train, is_color=True, mean=None):
    """resize_short, then a random crop and a coin-flip mirror (is_train) or a center crop, CHW, float32,
    minus `mean` (per channel, or a whole array)."""
    im = resize_short(im, resize_size)
    if is_train:
        im = random_crop(im, crop_size, is_color=is_color)
        if np.random.randint(2) == 0:
            im = left_right_flip(im, is_color)
    else:
        im = center_crop(im, crop_size, is_color=is_color)
    if len(im.shape) == 3:
        im = to_chw(im)
    im = im.astype("float32")
    if mean is not None:
        mean = np.array(mean, dtype=np.float32)
        if mean.ndim == 1 and is_color:
            mean = mean[:, np.newaxis, np.newaxis]
        elif mean.ndim != 1 and len(mean.shape) != len(im):
            # Paddle asserts this odd condition (the mean's rank against the image's first dim)
            raise ValueError("simple_transform: mean of shape %s does not fit the image %s"
                             % (mean.shape, im.shape))
        im -= mean
    return im


def load_and_transform(filename, resize_size, crop_size, is_train, is_color=True, mean=None):
    return simple_transform(load_image(filename, is_color), resize_size, crop_size, is_train, is_color, mean)
