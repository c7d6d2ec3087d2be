"""Paddle 1.8.5's numbers for the math/tensor layers (math_more family). Record (outside CI) with

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_math_more.py

The cases below run unchanged on paddle_compat in tests/unit/test_math_more_paddle18.py.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parity_harness import Case, rand  # noqa: E402

X = rand((3, 4), 1)
Y = rand((3, 4), 2)
POS = rand((3, 4), 3, 0.1, 0.9)
WIDE = rand((3, 4), 4, -3.0, 3.0)
A = rand((3, 5), 5)
B = rand((5, 4), 6)
BA = rand((2, 3, 4), 7)
BB = rand((2, 4, 2), 8)
V3 = rand((4, 3), 9)
W3 = rand((4, 3), 10)
SQ = rand((2, 3, 3), 11)
INTS = np.array([3, 1, 3, 0, 2, 1, 7], "int64")
BOOL = np.array([[1, 0, 1], [0, 0, 1]], "bool")
IDX = np.array([2, 0, 2], "int64")
IDX2 = np.array([[1, 3], [0, 0], [2, 1]], "int64")
ROWSEL = np.array([[1], [0], [1]], "int32")

CASES = [
    Case("log1p", [("x", POS)], lambda f, x: f.layers.log1p(x)),
    Case("atan", [("x", X)], lambda f, x: f.layers.atan(x)),
    Case("acos", [("x", X * 0.9)], lambda f, x: f.layers.acos(x)),
    Case("asin", [("x", X * 0.9)], lambda f, x: f.layers.asin(x)),
    Case("erf", [("x", WIDE)], lambda f, x: f.layers.erf(x)),
    Case("tanh_shrink", [("x", WIDE)], lambda f, x: f.layers.tanh_shrink(x)),
    Case("softshrink", [("x", WIDE)], lambda f, x: f.layers.softshrink(x, alpha=0.7)),
    Case("hard_shrink", [("x", WIDE)], lambda f, x: f.layers.hard_shrink(x, threshold=0.8)),
    Case("thresholded_relu", [("x", WIDE)], lambda f, x: f.layers.thresholded_relu(x, threshold=0.3)),
    Case("stanh", [("x", WIDE)], lambda f, x: f.layers.stanh(x, 0.5, 2.0)),
    Case("brelu", [("x", WIDE)], lambda f, x: f.layers.brelu(x, -1.0, 1.5)),
    Case("soft_relu", [("x", WIDE)], lambda f, x: f.layers.soft_relu(x, threshold=2.0)),
    Case("selu", [("x", WIDE)], lambda f, x: f.layers.selu(x)),
    Case("selu_attrs", [("x", WIDE)], lambda f, x: f.layers.selu(x, scale=1.5, alpha=0.5)),
    Case("hard_swish", [("x", WIDE * 2)], lambda f, x: f.layers.hard_swish(x)),
    Case("mish", [("x", WIDE)], lambda f, x: f.layers.mish(x, threshold=2.5)),
    Case("logsumexp", [("x", X)], lambda f, x: f.layers.logsumexp(x, dim=[1])),
    Case("logsumexp_all", [("x", X)], lambda f, x: f.layers.logsumexp(x)),
    Case("clamp", [("x", WIDE)], lambda f, x: f.layers.clamp(x, min=-1.0, max=0.5)),
    Case("clamp_min", [("x", WIDE)], lambda f, x: f.layers.clamp(x, min=0.2)),
    Case("addmm", [("i", X), ("a", A), ("b", B)], lambda f, i, a, b: f.layers.addmm(i, a, b, alpha=0.5, beta=2.0)),
    Case("addcmul", [("i", X), ("a", Y), ("b", POS)], lambda f, i, a, b: f.layers.addcmul(i, a, b, value=0.5)),
    Case("bmm", [("a", BA), ("b", BB)], lambda f, a, b: f.layers.bmm(a, b)),
    Case("dot", [("a", X), ("b", Y)], lambda f, a, b: f.layers.dot(a, b)),
    Case("dist2", [("a", X), ("b", Y)], lambda f, a, b: f.layers.dist(a, b)),
    Case("dist3", [("a", X), ("b", Y)], lambda f, a, b: f.layers.dist(a, b, p=3)),
    Case("dist_inf", [("a", X), ("b", Y)], lambda f, a, b: f.layers.dist(a, b, p=float("inf"))),
    Case("t", [("a", A)], lambda f, a: f.layers.t(a)),
    Case("cross", [("a", V3), ("b", W3)], lambda f, a, b: f.layers.cross(a, b, dim=1)),
    Case("cross_default", [("a", W3.T.copy()), ("b", V3.T.copy())], lambda f, a, b: f.layers.cross(a, b)),
    Case("kron", [("a", A[:2, :3].copy()), ("b", B[:2, :2].copy())], lambda f, a, b: f.layers.kron(a, b)),
    Case("trace", [("a", SQ)], lambda f, a: f.layers.trace(a, offset=1, dim1=1, dim2=2)),
    Case("tril", [("a", A)], lambda f, a: f.layers.tril(a, diagonal=1)),
    Case("triu", [("a", A)], lambda f, a: f.layers.triu(a, diagonal=-1)),
    Case("diag_embed", [("a", V3)], lambda f, a: f.layers.diag_embed(a, offset=1), grad=False),
    Case("diag", [("a", V3[0].copy())], lambda f, a: f.layers.diag(a), grad=False),
    Case("eye", [], lambda f: f.layers.eye(3, 4, batch_shape=[2]), grad=False),
    Case("linspace", [], lambda f: f.layers.linspace(-1.0, 2.0, 7, "float32"), grad=False),
    Case("arange", [], lambda f: f.layers.arange(1, 4, 0.5), grad=False),
    Case("full", [], lambda f: f.layers.full([2, 3], 1.5), grad=False),
    Case("full_like", [("a", X)], lambda f, a: f.layers.full_like(a, 2.5), grad=False),
    Case("reduce_all", [("b", BOOL)], lambda f, b: [f.layers.reduce_all(b), f.layers.reduce_all(b, dim=1),
                                                     f.layers.reduce_all(b, dim=[0], keep_dim=True)], grad=False),
    Case("reduce_any", [("b", BOOL)], lambda f, b: [f.layers.reduce_any(b), f.layers.reduce_any(b, dim=0),
                                                     f.layers.reduce_any(b, dim=1, keep_dim=True)], grad=False),
    Case("has_inf_nan", [("a", X)], lambda f, a: [f.layers.has_inf(a), f.layers.has_nan(a),
                                                   f.layers.isfinite(a),
                                                   f.layers.has_inf(a / f.layers.zeros_like(a))], grad=False),
    Case("allclose", [("a", X), ("b", Y)], lambda f, a, b: [f.layers.allclose(a, a + 1e-7), f.layers.allclose(a, b)],
         grad=False),
    Case("elementwise_equal", [("a", INTS), ("b", INTS[::-1].copy())],
         lambda f, a, b: f.layers.elementwise_equal(a, b), grad=False),
    Case("size_rank", [("a", BA)], lambda f, a: [f.layers.size(a), f.layers.rank(a)], grad=False),
    Case("sum", [("a", X), ("b", Y), ("c", POS)], lambda f, a, b, c: f.layers.sum([a, b, c])),
    Case("multiplex", [("a", X), ("b", Y), ("c", POS), ("i", ROWSEL)],
         lambda f, a, b, c, i: f.layers.multiplex([a, b, c], i)),
    Case("meshgrid", [("a", V3[:, 0].copy()), ("b", W3[0].copy())], lambda f, a, b: f.layers.meshgrid([a, b]),
         grad_outs=(0, 1)),
    Case("argsort", [("a", X)], lambda f, a: list(f.layers.argsort(a, axis=1, descending=True)), grad=False),
    Case("argsort0", [("a", X)], lambda f, a: list(f.layers.argsort(a, axis=0)), grad=False),
    Case("reverse", [("a", X)], lambda f, a: f.layers.reverse(a, [0, 1])),
    Case("flip", [("a", BA)], lambda f, a: f.layers.flip(a, [2])),
    Case("roll", [("a", X)], lambda f, a: f.layers.roll(a, [1, -1], [0, 1])),
    Case("roll_flat", [("a", X)], lambda f, a: f.layers.roll(a, 5)),
    Case("index_select", [("a", A), ("i", IDX)], lambda f, a, i: f.layers.index_select(a, i, dim=0)),
    Case("index_select1", [("a", A), ("i", IDX)], lambda f, a, i: f.layers.index_select(a, i, dim=1)),
    Case("index_sample", [("a", A), ("i", IDX2)], lambda f, a, i: f.layers.index_sample(a, i)),
    Case("where", [("b", BOOL)], lambda f, b: f.layers.where(b), grad=False),
    Case("nonzero_tuple", [("b", BOOL)], lambda f, b: list(f.layers.nonzero(b, as_tuple=True)), grad=False),
    Case("unique", [("a", INTS)], lambda f, a: list(f.layers.unique(a)), grad=False),
    Case("unique_with_counts", [("a", INTS)], lambda f, a: list(f.layers.unique_with_counts(a, dtype="int64")),
         grad=False),
    Case("log_softmax", [("a", WIDE)], lambda f, a: f.layers.log_softmax(a, axis=0)),
    Case("shard_index", [("a", INTS.reshape(7, 1).copy())],
         lambda f, a: f.layers.shard_index(a, index_num=8, nshards=3, shard_id=1), grad=False),
]


if __name__ == "__main__":
    import paddle.fluid as fluid
    from parity_harness import record
    record(fluid, CASES, os.path.join(HERE, "math_more.npz"))
