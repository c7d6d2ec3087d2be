"""Paddle 1.8.5's numbers for the loss layers (loss_more family). Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_loss_more.py

The cases below run unchanged on paddle_compat in tests/unit/test_loss_more_paddle18.py.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parity_harness import Case, rand  # noqa: E402

X = rand((4, 3), 41, -2.0, 2.0)
Y = rand((4, 3), 42, -2.0, 2.0)
IW = rand((4, 3), 43, 0.0, 1.0)
OW = rand((4, 3), 44, 0.0, 2.0)
LOGITS = rand((4, 5), 45, -2.0, 2.0)
LAB = np.array([[1], [0], [4], [2]], "int64")
COL = rand((4, 1), 46, -2.0, 2.0)
COL2 = rand((4, 1), 47, -2.0, 2.0)
LAB01 = np.array([[1.0], [0.0], [1.0], [0.0]], "float32")
LABPM = np.array([[1.0], [-1.0], [1.0], [-1.0]], "float32")
TSL = np.array([[-2.0], [-1.0], [0.3], [1.7]], "float32")
LOGP = np.log(np.random.RandomState(48).dirichlet(np.ones(3), 4).astype("float32"))
TGT = np.random.RandomState(49).dirichlet(np.ones(3), 4).astype("float32")
TGT[0, 1] = 0.0
PROBS = np.random.RandomState(50).dirichlet(np.ones(5), 4).astype("float32")
DLAB = np.array([[1], [0], [4], [4]], "int64")
ANC = rand((4, 3), 51)
POSV = rand((4, 3), 52)
NLAB = np.array([1, 2, 1, 3], "int64").reshape(4, 1).astype("float32")
CVMX = rand((3, 4), 53, 0.0, 3.0)
CVM = rand((3, 2), 54, 0.0, 1.0)
FX = rand((2, 3, 2, 2), 55)
FY = rand((2, 2, 2, 2), 56)
SEQ = rand((2, 3, 6), 57)
BX = rand((3, 2), 58)
BY = rand((3, 4), 59)
CL_LAB = np.array([[0], [2], [0], [1]], "int64")


def _center_loss(f, x, l):
    loss = f.layers.center_loss(x, l, 3, 0.5, f.ParamAttr(name="centers"))
    return [loss, f.default_main_program().global_block().var("centers")]   # centers after the update


CASES = [
    Case("smooth_l1", [("x", X), ("y", Y)], lambda f, x, y: f.layers.smooth_l1(x, y)),
    Case("smooth_l1_weighted", [("x", X), ("y", Y), ("iw", IW), ("ow", OW)],
         lambda f, x, y, iw, ow: f.layers.smooth_l1(x, y, iw, ow, sigma=2.0), no_grad=("iw", "ow")),
    Case("bpr_loss", [("x", LOGITS), ("l", LAB)], lambda f, x, l: f.layers.bpr_loss(x, l)),
    Case("rank_loss", [("l", LAB01), ("a", COL), ("b", COL2)], lambda f, l, a, b: f.layers.rank_loss(l, a, b),
         no_grad=("l",)),
    Case("margin_rank_loss", [("l", LABPM), ("a", COL), ("b", COL2)],
         lambda f, l, a, b: f.layers.margin_rank_loss(l, a, b, margin=0.5), no_grad=("l",)),
    Case("teacher_student_sigmoid_loss_bounds", [("x", COL * 10), ("l", TSL)],
         lambda f, x, l: f.layers.teacher_student_sigmoid_loss(x, l, soft_max_up_bound=5.0,
                                                               soft_max_lower_bound=-5.0), no_grad=("l",)),
    Case("teacher_student_sigmoid_loss", [("x", np.concatenate([COL, COL2 * 2])), ("l", np.concatenate([TSL, TSL]))],
         lambda f, x, l: f.layers.teacher_student_sigmoid_loss(x, l), no_grad=("l",)),
    Case("kldiv_mean", [("x", LOGP), ("t", TGT)], lambda f, x, t: f.layers.kldiv_loss(x, t), no_grad=("t",)),
    Case("kldiv_none", [("x", LOGP), ("t", TGT)], lambda f, x, t: f.layers.kldiv_loss(x, t, "none"),
         no_grad=("t",)),
    Case("kldiv_batchmean", [("x", LOGP), ("t", TGT)], lambda f, x, t: f.layers.kldiv_loss(x, t, "batchmean"),
         no_grad=("t",)),
    Case("kldiv_sum", [("x", LOGP), ("t", TGT)], lambda f, x, t: f.layers.kldiv_loss(x, t, "sum"), no_grad=("t",)),
    Case("dice_loss", [("x", PROBS), ("l", DLAB)], lambda f, x, l: f.layers.dice_loss(x, l)),
    Case("npair_loss", [("a", ANC), ("p", POSV), ("l", NLAB)], lambda f, a, p, l: f.layers.npair_loss(a, p, l),
         no_grad=("l",)),
    Case("mse_loss", [("x", X), ("y", Y)], lambda f, x, y: f.layers.mse_loss(x, y)),
    Case("cvm", [("x", CVMX), ("c", CVM)], lambda f, x, c: f.layers.continuous_value_model(x, c), no_grad=("c",)),
    Case("cvm_off", [("x", CVMX), ("c", CVM)], lambda f, x, c: f.layers.continuous_value_model(x, c, False),
         no_grad=("c",)),
    Case("fsp_matrix", [("x", FX), ("y", FY)], lambda f, x, y: f.layers.fsp_matrix(x, y)),
    Case("add_position_encoding", [("x", SEQ)], lambda f, x: f.layers.add_position_encoding(x, 0.5, 2.0)),
    Case("bilinear_tensor_product", [("x", BX), ("y", BY)],
         lambda f, x, y: f.layers.bilinear_tensor_product(x, y, 3, act="tanh")),
    Case("bilinear_tensor_product_nobias", [("x", BX), ("y", BY)],
         lambda f, x, y: f.layers.bilinear_tensor_product(x, y, 2, bias_attr=False)),
    Case("center_loss", [("x", X), ("l", CL_LAB)],
         lambda f, x, l: f.layers.center_loss(x, l, 3, 0.5, f.ParamAttr(name="centers"))),
    Case("center_loss_update", [("x", X), ("l", CL_LAB)], _center_loss),
]


if __name__ == "__main__":
    import paddle.fluid as fluid
    from parity_harness import record
    record(fluid, CASES, os.path.join(HERE, "loss_more.npz"))
