"""paddle.dataset.image against Paddle 1.8.5 (tests/data/paddle18/make_dataset_image.py, which ran with OpenCV):
decoding (PNG exactly; JPEG needs OpenCV or Pillow), resize_short (bicubic: within 1 level when OpenCV is not
installed), crops, flips, CHW, simple_transform / load_and_transform (same numpy draws), batch_images_from_tar."""

import base64
import importlib.util
import json
import os

import numpy as np
import pytest

import paddle.dataset.image as image

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
with open(os.path.join(DATA, "dataset_image.json")) as _fh:
    REF = json.load(_fh)
_spec = importlib.util.spec_from_file_location("make_dataset_image", os.path.join(DATA, "make_dataset_image.py"))
MK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(MK)
ENCODED = {k: base64.b64decode(v) for k, v in REF["encoded"].items()}


def _have(mod):
    return importlib.util.find_spec(mod) is not None


HAVE_CV2, HAVE_PIL = _have("cv2"), _have("PIL")
# keys whose values come from a resize: OpenCV's fixed-point bicubic vs torch's, 1 level apart at most
RESIZED = {"resize_down", "resize_up", "resize_gray", "simple_train", "simple_test", "simple_gray",
           "load_and_transform"}


@pytest.fixture(scope="module")
def got(tmp_path_factory):
    state = np.random.get_state()
    encoded = dict(ENCODED)
    if not (HAVE_CV2 or HAVE_PIL):
        encoded.pop("photo.jpg")    # JPEG needs a real decoder; checked below
    work = tmp_path_factory.mktemp("img")
    (work / "photo.jpg").write_bytes(ENCODED["photo.jpg"])    # packed into the tar in any case
    try:
        return MK.run_all(image, str(work), encoded)
    finally:
        np.random.set_state(state)


def _check(key, g, w):
    if isinstance(w, int):      # the next numpy draw: the helpers drew as often as Paddle's
        assert g == w, key
        return
    if isinstance(w, list):
        assert len(g) == len(w)
        for gi, wi in zip(g, w):
            _check(key, gi, wi)
        return
    assert (g["dtype"], g["shape"]) == (w["dtype"], w["shape"]), key
    ga, wa = np.array(g["data"], float), np.array(w["data"], float)
    if key in RESIZED and not HAVE_CV2:
        assert np.abs(ga - wa).max() <= 1.0 + 1e-4, key
        assert np.mean(ga != wa) < 0.2, key
    elif key.endswith("photo.jpg") and not HAVE_CV2:
        assert np.abs(ga - wa).max() <= 3, key     # another JPEG decoder
    elif key.startswith("bytes_gray/") and not HAVE_CV2:
        assert np.abs(ga - wa).max() <= 1, key     # Pillow's or our gray conversion vs OpenCV's
    else:
        np.testing.assert_array_equal(ga, wa, err_msg=key)


@pytest.mark.parity
@pytest.mark.parametrize("key", sorted(k for k in REF if k not in ("encoded", "tar")))
def test_image_helpers_match_paddle18(got, key):
    if key.endswith("photo.jpg") and not (HAVE_CV2 or HAVE_PIL):
        pytest.skip("JPEG decoding needs opencv-python or Pillow (the refusal is tested below)")
    _check(key, got[key], REF[key])


@pytest.mark.parity
def test_batch_images_from_tar_matches_paddle18(got):
    assert got["tar"] == REF["tar"]


@pytest.mark.skipif(HAVE_CV2 or HAVE_PIL, reason="a JPEG decoder is installed")
def test_jpeg_without_a_decoder_names_what_to_install():
    with pytest.raises(ImportError, match="opencv-python.*Pillow"):
        image.load_image_bytes(ENCODED["photo.jpg"])
