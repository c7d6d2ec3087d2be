"""paddle.dataset.flowers: Oxford 102 flowers, (image float32 (3*224*224,) CHW minus BGR means, label 0..101).

Needs scipy (to read the .mat label/split files) and OpenCV (`cv2`, to decode and resize the JPEGs with the
same bicubic resize Paddle uses); both are imported only when a flowers reader is created, and a missing one
raises ImportError naming it.  Paddle first repacks the JPEGs into pickle batches under DATA_HOME; we read them
straight from 102flowers.tgz (same samples, in archive order before the mapper).  Paddle's flag names are kept
as they are: train() reads the 'tstid' split and test() the 'trnid' one.
"""

import functools
import tarfile

import numpy as np

from . import common
from ..readers.decorator import map_readers, xmap_readers

__all__ = ["train", "test", "valid"]

DATA_URL = "http://paddlemodels.bj.bcebos.com/flowers/102flowers.tgz"
LABEL_URL = "http://paddlemodels.bj.bcebos.com/flowers/imagelabels.mat"
SETID_URL = "http://paddlemodels.bj.bcebos.com/flowers/setid.mat"
DATA_MD5 = "52808999861908f626f3c1f4e79d11fa"
LABEL_MD5 = "e0620be6f572b9609742df49c70aed4d"
SETID_MD5 = "a5357ecc9cb78c4bef273ce3793fc85c"
TRAIN_FLAG = "tstid"
TEST_FLAG = "trnid"
VALID_FLAG = "valid"


def _need(module, why):
    try:
        return __import__(module)
    except ImportError:
        raise ImportError("paddle.dataset.flowers needs the %r package to %s; install it (pip install %s)"
                          % (module, why, {"cv2": "opencv-python", "scipy": "scipy"}[module])) from None


def _transform(img_bytes, is_train, resize_size=256, crop_size=224, mean=(103.94, 116.78, 123.68)):
    cv2 = _need("cv2", "decode and resize the JPEG images")
    im = cv2.imdecode(np.frombuffer(img_bytes, np.uint8), 1)
    h, w = im.shape[:2]
    h_new, w_new = (resize_size * h // w, resize_size) if h > w else (resize_size, resize_size * w // h)
    im = cv2.resize(im, (w_new, h_new), interpolation=cv2.INTER_CUBIC)
    h, w = im.shape[:2]
    if is_train:
        hs, ws = np.random.randint(0, h - crop_size + 1), np.random.randint(0, w - crop_size + 1)
        im = im[hs:hs + crop_size, ws:ws + crop_size, :]
        if np.random.randint(2) == 0:
            im = im[:, ::-1, :]
    else:
        hs, ws = (h - crop_size) // 2, (w - crop_size) // 2
        im = im[hs:hs + crop_size, ws:ws + crop_size, :]
    im = im.transpose((2, 0, 1)).astype("float32")
    im -= np.array(mean, dtype=np.float32)[:, None, None]
    return im


def default_mapper(is_train, sample):
    img, label = sample
    return _transform(img, is_train).flatten().astype("float32"), label


train_mapper = functools.partial(default_mapper, True)
test_mapper = functools.partial(default_mapper, False)


def reader_creator(data_file, label_file, setid_file, dataset_name, mapper, buffered_size=1024, use_xmap=True,
                   cycle=False):
    _need("scipy", "read the .mat label and split files")
    import scipy.io as scio   # kept in a function: an optional dependency, needed only to read this data set
    labels = scio.loadmat(label_file)["labels"][0]
    indexes = scio.loadmat(setid_file)[dataset_name][0]
    img2label = {"jpg/image_%05d.jpg" % i: labels[i - 1] for i in indexes}

    def reader():
        while True:
            with tarfile.open(data_file) as tf:
                for member in tf:
                    if member.name in img2label:
                        yield tf.extractfile(member).read(), int(img2label[member.name]) - 1
            if not cycle:
                break

    if use_xmap:
        return xmap_readers(mapper, reader, 4, buffered_size)
    return map_readers(mapper, reader)


def _files():
    return (common.download(DATA_URL, "flowers", DATA_MD5), common.download(LABEL_URL, "flowers", LABEL_MD5),
            common.download(SETID_URL, "flowers", SETID_MD5))


def train(mapper=train_mapper, buffered_size=1024, use_xmap=True, cycle=False):
    return reader_creator(*_files(), TRAIN_FLAG, mapper, buffered_size, use_xmap, cycle=cycle)


def test(mapper=test_mapper, buffered_size=1024, use_xmap=True, cycle=False):
    return reader_creator(*_files(), TEST_FLAG, mapper, buffered_size, use_xmap, cycle=cycle)


def valid(mapper=test_mapper, buffered_size=1024, use_xmap=True):
    return reader_creator(*_files(), VALID_FLAG, mapper, buffered_size, use_xmap)


def fetch():
    _files()
