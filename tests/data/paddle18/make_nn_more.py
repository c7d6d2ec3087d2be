"""Paddle 1.8.5's numbers for the conv/pool/norm/resize layers (nn_more family). Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_nn_more.py

The cases below run unchanged on paddle_compat in tests/unit/test_nn_more_paddle18.py. Parameters take the
values stored with the numbers (the harness sets them after the startup program).
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parity_harness import Case, rand  # noqa: E402

IMG = rand((2, 3, 5, 5), 61)
IMG4 = rand((2, 4, 5, 6), 62)
VOL = rand((2, 2, 4, 5, 4), 63)
SMALL = rand((1, 2, 3, 4), 64)
VSMALL = rand((1, 2, 2, 3, 2), 65)
THETA = rand((2, 2, 3), 67, -0.8, 0.8)
GRID = rand((2, 3, 4, 2), 68, -1.1, 1.1)


def _nhwc(f, x):
    return f.layers.transpose(x, [0, 2, 3, 1])


def _abn(**kw):
    def fn(f, x):
        t = f.layers.scale(x, 1.0)
        y = f.layers.inplace_abn(t, moving_mean_name="abn_mean", moving_variance_name="abn_var", **kw)
        blk = f.default_main_program().global_block()
        return [y, blk.var("abn_mean"), blk.var("abn_var")]
    return fn


CASES = [
    # With a backward pass Paddle's inplace_abn_grad rebuilds X over Y in place, so a fetched Y then reads X:
    # the gradient cases leave Y out (fwd_only_outs), the forward cases check it.
    Case("inplace_abn", [("x", IMG4)], _abn(momentum=0.8), fwd_only_outs=(0,)),
    # Paddle's backward divides by the scale to rebuild X: keep it away from 0 (else its rounding shows).
    Case("inplace_abn_leaky", [("x", IMG4)], _abn(act="leaky_relu", act_alpha=0.1, epsilon=1e-3),
         fwd_only_outs=(0,), params={0: np.array([0.5, 0.8, -1.2, 0.9], "float32")}),
    Case("inplace_abn_elu_nhwc", [("x", IMG4)], _abn(act="elu", act_alpha=0.5, data_layout="NHWC"),
         fwd_only_outs=(0,)),
    Case("inplace_abn_fwd", [("x", IMG4)], _abn(momentum=0.8), grad=False),
    Case("inplace_abn_leaky_fwd", [("x", IMG4)], _abn(act="leaky_relu", act_alpha=0.1), grad=False),
    Case("inplace_abn_elu_fwd", [("x", IMG4)], _abn(act="elu", act_alpha=0.5, data_layout="NHWC"), grad=False),
    Case("conv2d_transpose", [("x", IMG)], lambda f, x: f.layers.conv2d_transpose(x, 4, filter_size=3, stride=2,
                                                                                    padding=1, act="tanh")),
    Case("conv2d_transpose_out_size", [("x", IMG)],
         lambda f, x: f.layers.conv2d_transpose(x, 2, output_size=[10, 10], filter_size=3, stride=2, padding=1,
                                                bias_attr=False)),
    Case("conv2d_transpose_no_filter_size", [("x", IMG)],
         lambda f, x: f.layers.conv2d_transpose(x, 2, output_size=9, stride=1, dilation=2)),
    Case("conv2d_transpose_groups_asym", [("x", IMG4)],
         lambda f, x: f.layers.conv2d_transpose(x, 6, filter_size=[2, 3], groups=2, padding=[1, 0, 0, 1])),
    Case("conv3d", [("x", VOL)], lambda f, x: f.layers.conv3d(x, 3, filter_size=[2, 3, 2], stride=[1, 2, 1],
                                                              padding=1, act="relu")),
    Case("conv3d_groups", [("x", VOL)], lambda f, x: f.layers.conv3d(x, 4, 2, groups=2, dilation=[1, 1, 2],
                                                                     bias_attr=False)),
    Case("conv3d_transpose", [("x", VOL)], lambda f, x: f.layers.conv3d_transpose(x, 3, filter_size=2, stride=2,
                                                                                  padding=[0, 1, 0])),
    Case("pool3d_max", [("x", VOL)], lambda f, x: f.layers.pool3d(x, 2, "max", pool_stride=[1, 2, 1],
                                                                  pool_padding=[0, 1, 0])),
    Case("pool3d_avg", [("x", VOL)], lambda f, x: f.layers.pool3d(x, [2, 3, 2], "avg", pool_stride=2,
                                                                  pool_padding=1, ceil_mode=True)),
    Case("pool3d_avg_incl", [("x", VOL)], lambda f, x: f.layers.pool3d(x, 3, "avg", pool_padding=1,
                                                                       exclusive=False)),
    Case("pool3d_global", [("x", VOL)], lambda f, x: f.layers.pool3d(x, global_pooling=True, pool_type="avg")),
    Case("adaptive_pool2d_max", [("x", IMG4)],
         lambda f, x: list(f.layers.adaptive_pool2d(x, [2, 4], "max", require_index=True))),
    Case("adaptive_pool2d_avg", [("x", IMG4)], lambda f, x: f.layers.adaptive_pool2d(x, 3, "avg")),
    Case("adaptive_pool3d_max", [("x", VOL)], lambda f, x: f.layers.adaptive_pool3d(x, [2, 3, 3], "max")),
    Case("adaptive_pool3d_avg", [("x", VOL)], lambda f, x: f.layers.adaptive_pool3d(x, 2, "avg")),
    Case("group_norm", [("x", IMG4)], lambda f, x: f.layers.group_norm(x, 2, epsilon=1e-3, act="relu")),
    Case("group_norm_noaffine", [("x", IMG4)], lambda f, x: f.layers.group_norm(x, 4, param_attr=False,
                                                                                bias_attr=False)),
    Case("group_norm_affine", [("x", IMG4)], lambda f, x: f.layers.group_norm(x, 2, param_attr=f.ParamAttr(),
                                                                              bias_attr=f.ParamAttr(), act="relu")),
    Case("group_norm_scale", [("x", IMG4)], lambda f, x: f.layers.group_norm(x, 2, param_attr=f.ParamAttr(),
                                                                             act="relu")),
    Case("group_norm_bias", [("x", IMG4)], lambda f, x: f.layers.group_norm(x, 2, bias_attr=f.ParamAttr(),
                                                                            act="relu")),
    Case("instance_norm", [("x", IMG)], lambda f, x: f.layers.instance_norm(x)),
    Case("lrn", [("x", IMG4 * 4)], lambda f, x: f.layers.lrn(x, n=3, k=2.0, alpha=0.1, beta=0.5)),
    Case("lrn_default", [("x", IMG4 * 4)], lambda f, x: f.layers.lrn(x)),
    Case("resize_bilinear", [("x", SMALL)], lambda f, x: f.layers.resize_bilinear(x, [5, 7])),
    Case("resize_bilinear_mode0", [("x", SMALL)],
         lambda f, x: f.layers.resize_bilinear(x, [5, 7], align_corners=False, align_mode=0)),
    Case("resize_bilinear_mode1", [("x", SMALL)],
         lambda f, x: f.layers.resize_bilinear(x, [2, 7], align_corners=False, align_mode=1)),
    Case("resize_bilinear_scale", [("x", SMALL)], lambda f, x: f.layers.resize_bilinear(x, scale=1.5)),
    Case("resize_nearest", [("x", SMALL)], lambda f, x: f.layers.resize_nearest(x, [5, 7])),
    Case("resize_nearest_noalign", [("x", SMALL)], lambda f, x: f.layers.resize_nearest(x, [5, 3],
                                                                                        align_corners=False)),
    Case("resize_trilinear", [("x", VSMALL)], lambda f, x: f.layers.resize_trilinear(x, [3, 4, 3])),
    Case("resize_trilinear_mode0", [("x", VSMALL)],
         lambda f, x: f.layers.resize_trilinear(x, [3, 2, 5], align_corners=False, align_mode=0)),
    Case("image_resize_nhwc", [("x", SMALL)],
         lambda f, x: f.layers.image_resize(_nhwc(f, x), [4, 5], data_format="NHWC")),
    Case("interpolate_nearest", [("x", SMALL)], lambda f, x: f.layers.interpolate(x, [6, 8], resample="NEAREST")),
    Case("image_resize_short", [("x", SMALL)], lambda f, x: f.layers.image_resize_short(x, 5)),
    Case("grid_sampler", [("x", SMALL), ("g", GRID[:1])], lambda f, x, g: f.layers.grid_sampler(x, g)),
    Case("affine_grid", [("t", THETA)], lambda f, t: f.layers.affine_grid(t, [2, 3, 4, 5])),
]


if __name__ == "__main__":
    import paddle.fluid as fluid
    from parity_harness import record
    record(fluid, CASES, os.path.join(HERE, "nn_more.npz"))
