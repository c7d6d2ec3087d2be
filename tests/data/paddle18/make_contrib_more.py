"""Paddle 1.8.5's numbers for more fluid.contrib layers (fused_embedding_seq_pool, tdm_child,
match_matrix_tensor, sequence_topk_avg_pooling, ctr_metric_bundle, BasicGRUUnit, BasicLSTMUnit, basic_gru,
basic_lstm). Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_contrib_more.py

The cases run unchanged on paddle_compat in tests/unit/test_contrib_more_paddle18.py.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parity_harness import Case, rand  # noqa: E402

IDS = np.array([[3], [0], [7], [3], [5], [1], [2]], "int64")
IDS_LOD = [[3, 1, 3]]

TREE = np.array([[0, 0, 0, 1, 2], [0, 1, 0, 3, 4], [0, 1, 0, 5, 6], [0, 2, 1, 0, 0], [1, 2, 1, 0, 0],
                 [2, 2, 2, 0, 0], [3, 2, 2, 0, 0]], "int32")
NODES = np.array([[1], [2], [3], [0], [6]], "int32")

MX = rand((5, 4), 201)
MX_LOD = [[2, 3]]
MY = rand((7, 4), 202)
MY_LOD = [[4, 3]]

# sequence_topk_avg_pooling: 2 channels; sample 0 is 3 x 4, sample 1 is 2 x 5
TK_ROW = rand((5, 1), 203)
TK_ROW_LOD = [[3, 2]]
TK_COL = rand((9, 1), 204)
TK_COL_LOD = [[4, 5]]
TK_X = np.random.RandomState(205).permutation(2 * (3 * 4 + 2 * 5)).astype("float32").reshape(-1, 1) / 10.0
TK_X_LOD = [[2 * 3 * 4, 2 * 2 * 5]]

PRED = rand((6, 1), 206, 0.05, 0.95)
LABEL = np.array([[1], [0], [0], [1], [1], [0]], "float32")

UNIT_X = rand((3, 4), 207)
UNIT_H = rand((3, 5), 208)
UNIT_C = rand((3, 5), 209)
SEQ = rand((2, 4, 3), 210)
SEQ_LEN = np.array([4, 2], "int64")
H0 = rand((2, 2, 5), 211)   # [num_layers * directions, batch, hidden]
C0 = rand((2, 2, 5), 212)


TREE_NODES = rand((2, 6, 3), 213)
# sample 0: 1 -> 2, 3; 2 -> 4, 5, 6 (then padding); sample 1: 1 -> 2, 5; 2 -> 3; 3 -> 4; 5 -> 6. Every
# sample's tree covers all 6 rows: Paddle leaves rows past a smaller tree with the previous sample's values.
TREE_EDGES = np.array([[[1, 2], [1, 3], [2, 4], [2, 5], [2, 6], [0, 0]],
                       [[1, 2], [2, 3], [3, 4], [1, 5], [5, 6], [0, 0]]], "int32")


# var_conv_2d: 2 input channels; sample 0 is 3 x 4, sample 1 is 5 x 2
VC_ROW = rand((8, 1), 214)
VC_ROW_LOD = [[3, 5]]
VC_COL = rand((6, 1), 215)
VC_COL_LOD = [[4, 2]]
VC_X = rand((2 * 3 * 4 + 2 * 5 * 2, 1), 216)
VC_X_LOD = [[24, 20]]


# multiclass_nms2: 2 images, 6 boxes, 3 classes (0 background); boxes overlap in pairs
_rs = np.random.RandomState(217)
_base = np.array([[0.1, 0.1, 0.4, 0.4], [0.12, 0.11, 0.42, 0.38], [0.5, 0.5, 0.9, 0.8], [0.52, 0.48, 0.88, 0.83],
                  [0.05, 0.6, 0.3, 0.95], [0.6, 0.05, 0.95, 0.3]], "float32")
NMS_BOXES = np.stack([_base, _base[::-1] + 0.01]).astype("float32")
NMS_SCORES = _rs.uniform(0, 1, (2, 3, 6)).astype("float32")
NMS_PIX = (NMS_BOXES * 20).astype("float32")


def _nms(**kw):
    def fn(f, b, s):
        out, idx = f.contrib.layers.multiclass_nms2(b, s, return_index=True, **kw)
        return [out, idx]
    return fn


def _gru_unit(f, x, h):
    unit = f.contrib.BasicGRUUnit("gru_unit", 5)
    return unit(x, h)


def _lstm_unit(f, x, h, c):
    unit = f.contrib.BasicLSTMUnit("lstm_unit", 5, forget_bias=0.5)
    return list(unit(x, h, c))


def _basic_gru(bidirectional, with_len):
    def fn(f, x, h0, *rest):
        seq_len = rest[0] if with_len else None
        out, last = f.contrib.basic_gru(x, h0, 5, num_layers=2 // (2 if bidirectional else 1),
                                        sequence_length=seq_len, bidirectional=bidirectional)
        return [out, last]
    return fn


def _basic_lstm(f, x, h0, c0, seq_len):
    out, last_h, last_c = f.contrib.basic_lstm(x, h0, c0, 5, num_layers=2, sequence_length=seq_len,
                                               forget_bias=0.7)
    return [out, last_h, last_c]


def _ctr(f, p, l):
    return list(f.contrib.layers.ctr_metric_bundle(p, l))


def _lod(case):
    case.lod_outs = True
    return case


CASES = [
    Case("fused_embedding_seq_pool", [("ids", IDS, IDS_LOD)],
         lambda f, i: f.contrib.layers.fused_embedding_seq_pool(i, [10, 3])),
    Case("fused_embedding_seq_pool_pad", [("ids", IDS, IDS_LOD)],
         lambda f, i: f.contrib.layers.fused_embedding_seq_pool(i, [10, 3], padding_idx=3)),
    Case("tdm_child", [("nodes", NODES)],
         lambda f, x: list(f.contrib.layers.tdm_child(x, 7, 2)), params={0: TREE}, grad=False),
    _lod(Case("match_matrix_tensor", [("x", MX, MX_LOD), ("y", MY, MY_LOD)],
              lambda f, x, y: list(f.contrib.layers.match_matrix_tensor(x, y, 3)))),
    _lod(Case("match_matrix_tensor_act", [("x", MX, MX_LOD), ("y", MY, MY_LOD)],
              lambda f, x, y: f.contrib.layers.match_matrix_tensor(x, y, 2, act="tanh")[0])),
    _lod(Case("sequence_topk_avg_pooling", [("x", TK_X, TK_X_LOD), ("row", TK_ROW, TK_ROW_LOD),
                                            ("col", TK_COL, TK_COL_LOD)],
              lambda f, x, r, c: f.contrib.layers.sequence_topk_avg_pooling(x, r, c, [1, 3, 5], 2),
              no_grad=("row", "col"))),
    Case("tree_conv", [("nodes", TREE_NODES), ("edges", TREE_EDGES)],
         lambda f, n, e: f.contrib.layers.tree_conv(n, e, 4, num_filters=2, max_depth=2)),
    Case("tree_conv_deep", [("nodes", TREE_NODES), ("edges", TREE_EDGES)],
         lambda f, n, e: f.contrib.layers.tree_conv(n, e, 3, max_depth=3, act=None, bias_attr=False)),
    _lod(Case("var_conv_2d", [("x", VC_X, VC_X_LOD), ("row", VC_ROW, VC_ROW_LOD), ("col", VC_COL, VC_COL_LOD)],
              lambda f, x, r, c: f.contrib.layers.var_conv_2d(x, r, c, 2, 3, 3), no_grad=("row", "col"))),
    _lod(Case("var_conv_2d_stride", [("x", VC_X, VC_X_LOD), ("row", VC_ROW, VC_ROW_LOD),
                                     ("col", VC_COL, VC_COL_LOD)],
              lambda f, x, r, c: f.contrib.layers.var_conv_2d(x, r, c, 2, 2, [3, 1], stride=[2, 1], act="relu"),
              no_grad=("row", "col"))),
    _lod(Case("multiclass_nms2", [("b", NMS_BOXES), ("s", NMS_SCORES)],
              _nms(score_threshold=0.2, nms_top_k=5, keep_top_k=6, nms_threshold=0.3), grad=False)),
    _lod(Case("multiclass_nms2_eta_pixels", [("b", NMS_PIX), ("s", NMS_SCORES)],
              _nms(score_threshold=0.1, nms_top_k=-1, keep_top_k=-1, nms_threshold=0.6, nms_eta=0.7,
                   normalized=False, background_label=-1), grad=False)),
    Case("ctr_metric_bundle", [("pred", PRED), ("label", LABEL)], _ctr, grad=False),
    Case("basic_gru_unit", [("x", UNIT_X), ("h", UNIT_H)], _gru_unit),
    Case("basic_lstm_unit", [("x", UNIT_X), ("h", UNIT_H), ("c", UNIT_C)], _lstm_unit, grad_outs=(0, 1)),
    Case("basic_gru", [("x", SEQ), ("h0", H0)], _basic_gru(False, False), grad_outs=(0, 1)),
    Case("basic_gru_bidi_len", [("x", SEQ), ("h0", H0), ("len", SEQ_LEN)], _basic_gru(True, True),
         grad_outs=(0, 1)),
    Case("basic_lstm", [("x", SEQ), ("h0", H0), ("c0", C0), ("len", SEQ_LEN)], _basic_lstm, grad_outs=(0, 1, 2)),
]


if __name__ == "__main__":
    import paddle.fluid as fluid
    from parity_harness import record
    record(fluid, CASES, os.path.join(HERE, "contrib_more.npz"))
