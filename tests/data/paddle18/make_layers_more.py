"""Paddle 1.8.5's numbers for the remaining fluid.layers ops (data_norm, spectral_norm, the RoI poolings,
deformable conv, hash, similarity_focus, filter_by_instag, tensor_array_to_tensor). Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_layers_more.py

The cases run unchanged on paddle_compat in tests/unit/test_layers_more_paddle18.py.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parity_harness import Case, rand  # noqa: E402

ROW = rand((6, 4), 81)
ROW_SLOTS = ROW.copy()
ROW_SLOTS[1, 0:2] = 0.0
ROW_SLOTS[3, 2:4] = 0.0
ROW_SLOTS[4, 0] = 0.0            # only the slot's first column zero
STATS = {0: np.array([10.0, 12.0, 8.0, 20.0], "float32"), 1: np.array([1.5, -2.0, 0.4, 3.0], "float32"),
         2: np.array([6.0, 9.0, 2.5, 14.0], "float32")}
STATS_SS = {0: np.array([1.2, 0.7, -0.5, 1.1], "float32"), 1: np.array([0.1, -0.3, 0.2, 0.05], "float32")}
STATS_SS.update({k + 2: v for k, v in STATS.items()})

W3 = rand((3, 4, 2), 82)
W2 = rand((4, 5), 83)

FEAT = rand((2, 3, 6, 7), 84)
ROIS = np.array([[1.0, 2.0, 10.0, 9.0], [2.5, 0.0, 13.0, 11.5], [4.0, 5.0, 8.0, 10.0]], "float32")
ROIS_LOD = [[2, 1]]
PSFEAT = rand((2, 8, 6, 6), 85)
TRANS = rand((3, 2, 2, 3), 97)
TRANS_PS = rand((3, 4, 2, 2), 98)

DX = rand((2, 2, 5, 5), 86)
DOFF = rand((2, 18, 5, 5), 87, -1.5, 1.5)
DMASK = rand((2, 9, 5, 5), 88, 0.0, 1.0)
DX4 = rand((1, 4, 5, 5), 89)
DOFF2 = rand((1, 36, 3, 3), 90, -1.5, 1.5)

IDS = np.array([[1], [2], [3], [100]], "int64")
IDS2 = np.array([[1, 7], [2, 9], [12345, 0]], "int64")
IDS32 = np.array([[5], [6], [70000]], "int32")
IDS_WIDE = np.arange(15, dtype="int64").reshape(3, 5) * 7919            # 40-byte rows: xxHash's 32-byte stripes
IDS32_WIDE = np.arange(18, dtype="int32").reshape(2, 9) * 104729 - 5     # 36 bytes: stripe + a 4-byte tail

SIM = rand((2, 3, 4, 5), 91)

INS = rand((5, 3), 92)
INS_TAG = np.array([[1], [3], [2], [5], [4], [1], [3], [6], [2]], "int64")
INS_TAG_LOD = [[2, 1, 3, 1, 2]]
FILTER = np.array([[1], [4]], "int64")
INS_L = rand((6, 3), 93)
INS_L_LOD = [[2, 3, 1]]
TAG_L = np.array([[7], [1], [2], [9]], "int64")
TAG_L_LOD = [[1, 2, 1]]
FILTER_NONE = np.array([[42]], "int64")

ONEHOT_IDS = np.array([[0, 3], [4, 1], [2, 2]], "int64")
ONEHOT_OOR = np.array([[0], [7], [-1], [3]], "int64")
Q = rand((2, 3, 4), 99)
K = rand((2, 5, 4), 100)
V = rand((2, 5, 6), 101)

A0 = rand((2, 3), 94)
A1 = rand((2, 2), 95)
A2 = rand((2, 3), 96)


def _arr_to_tensor(axis, use_stack, n):
    def fn(f, *xs):
        arr = f.layers.create_array("float32")
        for i, x in enumerate(xs[:n]):
            f.layers.array_write(x, f.layers.fill_constant([1], "int64", i), array=arr)
        out, idx = f.layers.tensor_array_to_tensor(arr, axis=axis, use_stack=use_stack)
        return [out, idx]
    return fn


def _hash(hash_size, num_hash=1):
    def fn(f, x):
        try:
            return f.layers.hash(x, hash_size, num_hash=num_hash)
        except TypeError:
            # Paddle 1.8.5's layers.hash always fails its own check_type (types given as strings): record the
            # op it would have appended.
            helper = f.layer_helper.LayerHelper("hash")
            out = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
            helper.append_op(type="hash", inputs={"X": x}, outputs={"Out": out},
                             attrs={"num_hash": num_hash, "mod_by": hash_size})
            return out
    return fn


def _deform_roi_ps(f, x, r, t):
    kw = dict(spatial_scale=0.5, group_size=[2, 2], pooled_height=2, pooled_width=2, part_size=[2, 2],
              sample_per_part=3)
    if f.__name__.startswith("paddle_compat"):
        return f.layers.deformable_roi_pooling(x, r, t, position_sensitive=True, **kw)
    # Paddle 1.8.5's layer passes output_dim as a float (C / pooled_height / pooled_width) with
    # position_sensitive=True, which its op rejects: record the op it means (output_dim 8 / 2 / 2 = 2).
    helper = f.layer_helper.LayerHelper("deformable_psroi_pooling")
    out = helper.create_variable_for_type_inference(x.dtype)
    cnt = helper.create_variable_for_type_inference("int32")
    kw.update(output_dim=2, no_trans=False, trans_std=0.1)
    helper.append_op(type="deformable_psroi_pooling", inputs={"Input": x, "ROIs": r, "Trans": t},
                     outputs={"Output": out, "TopCount": cnt}, attrs=kw)
    return out


def _lod(case):
    case.lod_outs = True
    return case


CASES = [
    Case("data_norm", [("x", ROW)], lambda f, x: f.layers.data_norm(x), params=STATS),
    Case("data_norm_act_eps", [("x", ROW)], lambda f, x: f.layers.data_norm(x, act="tanh", epsilon=1e-3),
         params=STATS),
    Case("data_norm_slots", [("x", ROW_SLOTS)], lambda f, x: f.layers.data_norm(x, slot_dim=2), params=STATS),
    Case("data_norm_scale_shift", [("x", ROW)],
         lambda f, x: f.layers.data_norm(x, param_attr={"scale_w": 1.0}, enable_scale_and_shift=True),
         params=STATS_SS),
    Case("spectral_norm_dim1", [("w", W3)], lambda f, w: f.layers.spectral_norm(w, dim=1, power_iters=2)),
    Case("spectral_norm_dim0", [("w", W2)], lambda f, w: f.layers.spectral_norm(w, dim=0, power_iters=1,
                                                                                eps=1e-6)),
    Case("roi_align", [("x", FEAT), ("rois", ROIS, ROIS_LOD)],
         lambda f, x, r: f.layers.roi_align(x, r, 2, 3, spatial_scale=0.5, sampling_ratio=2)),
    Case("roi_align_adaptive", [("x", FEAT), ("rois", ROIS, ROIS_LOD)],
         lambda f, x, r: f.layers.roi_align(x, r, 3, 2, spatial_scale=0.5), no_grad=("rois",)),
    Case("roi_pool", [("x", FEAT), ("rois", ROIS, ROIS_LOD)],
         lambda f, x, r: f.layers.roi_pool(x, r, 2, 3, spatial_scale=0.5), no_grad=("rois",)),
    Case("roi_pool_1x1", [("x", FEAT), ("rois", ROIS, ROIS_LOD)],
         lambda f, x, r: f.layers.roi_pool(x, r, spatial_scale=0.25), no_grad=("rois",)),
    Case("psroi_pool", [("x", PSFEAT), ("rois", ROIS, ROIS_LOD)],
         lambda f, x, r: f.layers.psroi_pool(x, r, 2, 0.5, 2, 2), no_grad=("rois",)),
    Case("prroi_pool", [("x", FEAT), ("rois", ROIS, ROIS_LOD)],
         lambda f, x, r: f.layers.prroi_pool(x, r, 0.5, 2, 3)),
    Case("deformable_roi_pooling", [("x", FEAT), ("rois", ROIS, ROIS_LOD), ("trans", TRANS)],
         lambda f, x, r, t: f.layers.deformable_roi_pooling(x, r, t, spatial_scale=0.5, pooled_height=2,
                                                            pooled_width=3, sample_per_part=2, trans_std=0.2),
         no_grad=("rois",)),
    Case("deformable_roi_pooling_ps", [("x", PSFEAT), ("rois", ROIS, ROIS_LOD), ("trans", TRANS_PS)],
         _deform_roi_ps,
         no_grad=("rois",)),
    Case("deformable_roi_pooling_no_trans", [("x", FEAT), ("rois", ROIS, ROIS_LOD), ("trans", TRANS)],
         lambda f, x, r, t: f.layers.deformable_roi_pooling(x, r, t, no_trans=True, spatial_scale=0.25,
                                                            pooled_height=3, pooled_width=2, part_size=[2, 2],
                                                            sample_per_part=4),
         no_grad=("rois",)),
    Case("deformable_conv", [("x", DX), ("offset", DOFF), ("mask", DMASK)],
         lambda f, x, o, m: f.layers.deformable_conv(x, o, m, 3, 3, padding=1, im2col_step=1)),
    Case("deformable_conv_v1", [("x", DX4), ("offset", DOFF2)],
         lambda f, x, o: f.layers.deformable_conv(x, o, None, 2, 3, stride=2, padding=1, deformable_groups=2,
                                                  groups=2, modulated=False, bias_attr=False, im2col_step=1)),
    Case("hash", [("ids", IDS)], _hash(10000, 3), grad=False),
    Case("hash_pairs", [("ids", IDS2)], _hash(97, 2), grad=False),
    Case("hash_int32", [("ids", IDS32)], _hash(1000), grad=False),
    Case("hash_wide", [("ids", IDS_WIDE)], _hash(1 << 30, 2), grad=False),
    Case("hash_int32_wide", [("ids", IDS32_WIDE)], _hash(65536, 3), grad=False),
    Case("similarity_focus_c", [("x", SIM)], lambda f, x: f.layers.similarity_focus(x, 1, [0, 2]), grad=False),
    Case("similarity_focus_h", [("x", SIM)], lambda f, x: f.layers.similarity_focus(x, 2, [1]), grad=False),
    Case("similarity_focus_w", [("x", SIM)], lambda f, x: f.layers.similarity_focus(x, 3, [0, 4]), grad=False),
    _lod(Case("filter_by_instag", [("ins", INS), ("tag", INS_TAG, INS_TAG_LOD), ("flt", FILTER)],
              lambda f, i, t, ft: f.layers.filter_by_instag(i, t, ft, False), no_grad=("flt",))),
    _lod(Case("filter_by_instag_lod", [("ins", INS_L, INS_L_LOD), ("tag", TAG_L, TAG_L_LOD), ("flt", FILTER)],
              lambda f, i, t, ft: f.layers.filter_by_instag(i, t, ft, True))),
    _lod(Case("filter_by_instag_empty", [("ins", INS), ("tag", INS_TAG, INS_TAG_LOD), ("flt", FILTER_NONE)],
              lambda f, i, t, ft: f.layers.filter_by_instag(i, t, ft, False, out_val_if_empty=7), grad=False)),
    Case("fluid_one_hot", [("ids", ONEHOT_IDS)], lambda f, x: f.one_hot(x, 5), grad=False),
    Case("layers_one_hot", [("ids", ONEHOT_OOR)], lambda f, x: f.layers.one_hot(x, 4, allow_out_of_range=True),
         grad=False),
    Case("layers_one_hot_depth_var", [("ids", ONEHOT_IDS[:, :1].copy())],
         lambda f, x: f.layers.one_hot(x, f.layers.fill_constant([1], "int32", 6)), grad=False),
    Case("fluid_one_hot_out_of_range", [("ids", ONEHOT_OOR)],
         lambda f, x: f.one_hot(x, 4, allow_out_of_range=True), grad=False),
    Case("scaled_dot_product_attention", [("q", Q), ("k", K), ("v", V)],
         lambda f, q, k, v: f.nets.scaled_dot_product_attention(q, k, v)),
    Case("scaled_dot_product_attention_heads", [("q", Q), ("k", K), ("v", V)],
         lambda f, q, k, v: f.nets.scaled_dot_product_attention(q, k, v, num_heads=2)),
    Case("tensor_array_to_tensor", [("a", A0), ("b", A1)], _arr_to_tensor(1, False, 2)),
    Case("tensor_array_to_tensor_stack", [("a", A0), ("c", A2)], _arr_to_tensor(0, True, 2)),
]


if __name__ == "__main__":
    import paddle.fluid as fluid
    from parity_harness import record
    record(fluid, CASES, os.path.join(HERE, "layers_more.npz"))
