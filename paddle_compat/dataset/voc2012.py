"""paddle.dataset.voc2012: PASCAL VOC 2012 segmentation samples (image, label) from VOCtrainval_11-May-2012.tar.

As Paddle 1.8 (which decodes with Pillow): image = uint8 (H, W, 3) RGB, label = uint8 (H, W) class indices of
the palette PNG. Decoding uses Pillow when installed, else OpenCV for the JPEG images (channels reordered to
RGB; OpenCV's and Pillow's JPEG decoders may differ by a level or two) and the built-in PNG decoder for labels.
train() reads the 'trainval' list, test() 'train' and val() 'val', as Paddle does. (Paddle 1.8 on Python 3 looks
the files up under the list's bytes names, b'2007_000032', and fails with KeyError; the names are decoded here.)
"""

import io
import tarfile

import numpy as np

from . import _optional as optional, _png, common

__all__ = ["train", "test", "val"]

VOC_URL = "http://host.robots.ox.ac.uk/pascal/VOC/voc2012/VOCtrainval_11-May-2012.tar"
VOC_MD5 = "6cd6e144f989b92b3379bac3b3de84fd"
SET_FILE = "VOCdevkit/VOC2012/ImageSets/Segmentation/{}.txt"
DATA_FILE = "VOCdevkit/VOC2012/JPEGImages/{}.jpg"
LABEL_FILE = "VOCdevkit/VOC2012/SegmentationClass/{}.png"
CACHE_DIR = "voc2012"


def _decode(data):
    """Pillow's np.array(Image.open(...)): RGB for color images, indices for palette images."""
    Image = optional.pil_image()
    if Image is not None:
        return np.array(Image.open(io.BytesIO(data)))
    if _png.is_png(data):
        return _png.decode(data)
    cv2 = optional.cv2()
    if cv2 is None:
        raise ImportError("paddle.dataset.voc2012 needs Pillow (as Paddle) or opencv-python to decode the JPEG "
                          "images")
    return cv2.imdecode(np.frombuffer(data, np.uint8), 1)[:, :, ::-1].copy()


def reader_creator(filename, sub_name):
    tarobject = tarfile.open(filename)
    name2mem = {m.name: m for m in tarobject.getmembers()}

    def reader():
        for line in tarobject.extractfile(name2mem[SET_FILE.format(sub_name)]):
            name = line.strip().decode()
            data = tarobject.extractfile(name2mem[DATA_FILE.format(name)]).read()
            label = tarobject.extractfile(name2mem[LABEL_FILE.format(name)]).read()
            yield _decode(data), _decode(label)
    return reader


def train():
    return reader_creator(common.download(VOC_URL, CACHE_DIR, VOC_MD5), "trainval")


def test():
    return reader_creator(common.download(VOC_URL, CACHE_DIR, VOC_MD5), "train")


def val():
    return reader_creator(common.download(VOC_URL, CACHE_DIR, VOC_MD5), "val")
