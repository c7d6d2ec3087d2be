"""Paddle 1.8.5's numbers for the shape/index/layout layers (shape_more family). Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_shape_more.py

The cases below run unchanged on paddle_compat in tests/unit/test_shape_more_paddle18.py.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parity_harness import Case, rand  # noqa: E402

X = rand((4, 3), 21)
X3 = rand((2, 3, 4), 22)
IMG = rand((2, 4, 4, 4), 23)
IMG6 = rand((4, 6, 2, 2), 24)
IDXND = np.array([[1, 2], [0, 0], [1, 0]], "int32")
IDX1 = np.array([[1], [0], [1]], "int64")
IDS = np.array([2, 0], "int64")
IDS_DUP = np.array([1, 1, 3], "int64")
UPD = rand((2, 3), 25)
UPD3 = rand((3, 3), 26)
UPDND = rand((3, 4), 27)
UPDND1 = rand((3, 3, 4), 28)
SMALL = rand((2, 2), 29)
SC = rand((4,), 30, 0.5, 1.5)
BI = rand((4,), 31)


CASES = [
    Case("gather_nd", [("x", X3), ("i", IDXND)], lambda f, x, i: f.layers.gather_nd(x, i)),
    Case("gather_nd_rows", [("x", X3), ("i", IDX1)], lambda f, x, i: f.layers.gather_nd(x, i)),
    Case("scatter", [("x", X), ("i", IDS), ("u", UPD)], lambda f, x, i, u: f.layers.scatter(x, i, u)),
    Case("scatter_add", [("x", X), ("i", IDS_DUP), ("u", UPD3)],
         lambda f, x, i, u: f.layers.scatter(x, i, u, overwrite=False)),
    Case("scatter_nd_add", [("x", X3), ("i", IDXND), ("u", UPDND)],
         lambda f, x, i, u: f.layers.scatter_nd_add(x, i, u)),
    Case("scatter_nd", [("i", IDX1), ("u", UPDND1)], lambda f, i, u: f.layers.scatter_nd(i, u, [3, 3, 4])),
    Case("strided_slice", [("x", X3)],
         lambda f, x: f.layers.strided_slice(x, axes=[1, 2], starts=[0, 3], ends=[3, 0], strides=[2, -1])),
    Case("strided_slice_neg", [("x", X3)],
         lambda f, x: f.layers.strided_slice(x, axes=[0, 2], starts=[-1, -4], ends=[-3, 10], strides=[-1, 3])),
    Case("unstack", [("x", X3)], lambda f, x: f.layers.unstack(x, axis=1), grad_outs=(0, 1, 2)),
    Case("expand_as", [("x", SMALL), ("t", rand((4, 6), 32))], lambda f, x, t: f.layers.expand_as(x, t),
         no_grad=("t",)),
    Case("crop", [("x", X3)], lambda f, x: f.layers.crop(x, shape=[1, 2, 3], offsets=[1, 1, 0])),
    Case("crop_like", [("x", X3), ("y", rand((2, 2, 2), 34))],
         lambda f, x, y: f.layers.crop(x, shape=y, offsets=[0, 1, 2]), no_grad=("y",)),
    Case("crop_tensor", [("x", X3)], lambda f, x: f.layers.crop_tensor(x, shape=[-1, 2, 2], offsets=[1, 0, 1])),
    Case("pad2d_constant", [("x", IMG)], lambda f, x: f.layers.pad2d(x, [1, 0, 2, 1], pad_value=0.5)),
    Case("pad2d_reflect", [("x", IMG)], lambda f, x: f.layers.pad2d(x, [1, 2, 0, 1], mode="reflect")),
    Case("pad2d_edge_nhwc", [("x", IMG)], lambda f, x: f.layers.pad2d(x, [2, 0, 1, 1], mode="edge",
                                                                      data_format="NHWC")),
    Case("pad_constant_like", [("x", X3), ("y", rand((1, 2, 3), 33))],
         lambda f, x, y: f.layers.pad_constant_like(x, y, pad_value=0.25)),
    Case("space_to_depth", [("x", IMG)], lambda f, x: f.layers.space_to_depth(x, 2)),
    Case("pixel_shuffle", [("x", IMG)], lambda f, x: f.layers.pixel_shuffle(x, 2)),
    Case("shuffle_channel", [("x", IMG6)], lambda f, x: f.layers.shuffle_channel(x, 3)),
    Case("temporal_shift", [("x", IMG6)], lambda f, x: f.layers.temporal_shift(x, seg_num=2, shift_ratio=0.2)),
    Case("temporal_shift_default", [("x", IMG)], lambda f, x: f.layers.temporal_shift(x, seg_num=2)),
    Case("unfold", [("x", IMG)], lambda f, x: f.layers.unfold(x, [2, 3], strides=[1, 2], paddings=[1, 0, 0, 1],
                                                              dilations=1)),
    Case("affine_channel", [("x", IMG), ("s", SC), ("b", BI)],
         lambda f, x, s, b: f.layers.affine_channel(x, s, b)),
    Case("affine_channel_nhwc", [("x", IMG), ("s", SC), ("b", BI)],
         lambda f, x, s, b: f.layers.affine_channel(x, s, b, data_layout="NHWC", act="tanh")),
    Case("maxout", [("x", IMG6)], lambda f, x: f.layers.maxout(x, groups=3)),
    Case("maxout_last", [("x", IMG)], lambda f, x: f.layers.maxout(x, groups=2, axis=-1)),
]


if __name__ == "__main__":
    import paddle.fluid as fluid
    from parity_harness import record
    record(fluid, CASES, os.path.join(HERE, "shape_more.npz"))
