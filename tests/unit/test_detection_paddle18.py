"""Detection layers against Paddle 1.8.5 (tests/data/paddle18/make_detection.py): sigmoid_focal_loss's and
roi_perspective_transform's outputs and input gradients; the ops and output variables that
retinanet_target_assign, retinanet_detection_output, roi_perspective_transform and contrib.rank_attention build;
rank_attention's kernel against a NumPy loop (Paddle 1.8.5 has no CPU kernel for it)."""

import json
import os

import numpy as np
import pytest

import paddle_compat as fluid
from paddle_compat.fluid import layers
from paddle_compat.ir.dtypes import dtype_name

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "paddle18")
REC = np.load(os.path.join(DATA, "detection.npz"))
with open(os.path.join(DATA, "detection_programs.json")) as _fh:
    PROGRAMS = json.load(_fh)
FOCAL = sorted({k.split("/")[0] for k in REC.files if k.startswith("focal_")})


@pytest.mark.parametrize("case", FOCAL)
def test_sigmoid_focal_loss_matches_paddle18(case):
    g = lambda k: REC[case + "/" + k]  # noqa: E731
    gamma, alpha, fg = g("attrs").tolist()
    n, c = g("x").shape
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", shape=[n, c], dtype="float32")
        x.stop_gradient = False
        label = fluid.data("label", shape=[n, 1], dtype="int32")
        fgv = fluid.data("fg", shape=[1], dtype="int32")
        w = fluid.data("w", shape=[n, c], dtype="float32")
        out = layers.sigmoid_focal_loss(x, label, fgv, gamma=gamma, alpha=alpha)
        gx, = fluid.gradients([layers.reduce_sum(out * w)], [x])
    o, grad = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"x": g("x"), "label": g("label"), "fg": np.array([int(fg)], "int32"), "w": g("w")},
        fetch_list=[out, gx])
    np.testing.assert_allclose(o, g("out"), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grad, g("grad_x"), rtol=1e-4, atol=1e-6)


def _describe(main, types):
    block, res = main.global_block(), []
    for op in block.ops:
        if op.type in types:
            outs = {s: [[list(block.var(n).shape), dtype_name(block.var(n).dtype), block.var(n).lod_level,
                         block.var(n).stop_gradient] for n in op.output(s)] for s in op.outputs}
            attrs = {k: v for k, v in op.attrs.items() if not k.startswith("op_")}
            res.append([op.type, outs, sorted(op.inputs), attrs])
    return res


def _same(ours, paddle):
    assert [o[0] for o in ours] == [p[0] for p in paddle]
    names = {"FP32": "float32", "INT32": "int32", "INT64": "int64"}
    for (t, outs, ins, attrs), (_, p_outs, p_ins, p_attrs) in zip(ours, paddle):
        assert ins == p_ins, t
        assert sorted(outs) == sorted(p_outs), t
        for slot in p_outs:
            for mine, theirs in zip(outs[slot], p_outs[slot]):
                assert mine == [theirs[0], names[theirs[1]], theirs[2], theirs[3]], (t, slot)
        for k, v in p_attrs.items():
            assert attrs[k] == pytest.approx(v), (t, k)


def test_retinanet_target_assign_builds_as_paddle18():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        d = lambda n, s, t="float32": layers.data(name=n, shape=s, append_batch_size=False, dtype=t)  # noqa: E731
        res = layers.retinanet_target_assign(
            d("bbox_pred", [1, 100, 4]), d("cls_logits", [1, 100, 10]), d("anchor_box", [100, 4]),
            d("anchor_var", [100, 4]), d("gt_boxes", [10, 4]), d("gt_labels", [10, 1], "int32"),
            d("is_crowd", [1], "int32"), d("im_info", [1, 3]), 10)
    assert len(res) == 6
    _same(_describe(main, {"retinanet_target_assign"}), [o for o in PROGRAMS["retinanet_target_assign"]
                                                          if o[0] == "retinanet_target_assign"])
    assert [op.type for op in main.global_block().ops] == ["retinanet_target_assign", "reshape2", "reshape2",
                                                          "gather", "gather"]


def test_retinanet_detection_output_builds_as_paddle18():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        d = lambda n, s: layers.data(name=n, shape=s, append_batch_size=False, dtype="float32")  # noqa: E731
        b, s, a = d("bboxes", [1, 21, 4]), d("scores", [1, 21, 10]), d("anchors", [21, 4])
        layers.retinanet_detection_output(bboxes=[b, b], scores=[s, s], anchors=[a, a], im_info=d("im_info", [1, 3]),
                                          score_threshold=0.05, nms_top_k=1000, keep_top_k=100, nms_threshold=0.3,
                                          nms_eta=1.)
    paddle = json.loads(json.dumps(PROGRAMS["retinanet_detection_output"]))
    paddle[0][1]["Out"][0][2] = 1       # declared lod_level 1 here, so fetches carry the per-image LoD
    _same(_describe(main, {"retinanet_detection_output"}), paddle)


def test_roi_perspective_transform_builds_as_paddle18():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = layers.data(name="x", shape=[256, 30, 30], dtype="float32")
        rois = layers.data(name="rois", shape=[8], dtype="float32", lod_level=1)
        layers.roi_perspective_transform(x, rois, 7, 7, 0.6)
    _same(_describe(main, {"roi_perspective_transform"}), PROGRAMS["roi_perspective_transform"])


def test_roi_perspective_transform_matches_paddle18():
    g = lambda k: REC["rpt/" + k]  # noqa: E731
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", shape=[2, 3, 12, 14], dtype="float32")
        x.stop_gradient = False
        rois = fluid.data("rois", shape=[-1, 8], dtype="float32", lod_level=1)
        w = fluid.data("w", shape=[4, 3, 5, 6], dtype="float32")
        out, mask, matrix = layers.roi_perspective_transform(x, rois, 5, 6, 0.5)
        gx, = fluid.gradients([layers.reduce_sum(out * w)], [x])
    feed = {"x": g("x"), "rois": fluid.create_lod_tensor(g("rois"), [[2, 2]], fluid.CPUPlace()), "w": g("w")}
    o, m, mat, grad = fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=[out, mask, matrix, gx],
                                                           return_numpy=False)
    np.testing.assert_array_equal(np.array(m), g("mask"))
    np.testing.assert_allclose(np.array(mat), g("matrix"), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.array(o), g("out"), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.array(grad), g("grad_x"), rtol=1e-4, atol=1e-5)
    assert o.lod() == [[0, 2, 4]]


def test_rank_attention_builds_as_paddle18():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        inp = fluid.data(name="input", shape=[None, 2], dtype="float32")
        ro = fluid.data(name="rank_offset", shape=[None, 7], dtype="int32")
        fluid.contrib.layers.rank_attention(input=inp, rank_offset=ro, rank_param_shape=[18, 3],
                                            rank_param_attr=fluid.ParamAttr(name="ubm_rank_param.w_0"), max_rank=3)
    _same(_describe(main, {"rank_attention"}), PROGRAMS["rank_attention"])


def _rank_attention_numpy(x, offset, param, max_rank):
    n, d = x.shape
    blocks = param.reshape(max_rank * max_rank, d, -1)
    out = np.zeros((n, blocks.shape[2]), "float64")
    for i in range(n):
        lower = offset[i, 0] - 1
        for k in range(max_rank):
            faster, idx = offset[i, 2 * k + 1] - 1, offset[i, 2 * k + 2]
            if lower < 0 or faster < 0:
                continue
            out[i] += x[idx] @ blocks[lower * max_rank + faster]
    return out


def test_rank_attention_forward_and_param_gradient():
    r = np.random.RandomState(3)
    n, d, c, max_rank = 5, 2, 3, 3
    x = r.rand(n, d).astype("float32")
    offset = np.array([[1, 1, 0, 2, 3, -1, -1], [3, 3, 4, 1, 1, 2, 2], [-1, -1, -1, -1, -1, -1, -1],
                       [2, 2, 0, -1, -1, 3, 4], [1, 1, 1, 1, 2, 1, 3]], "int32")
    param = r.rand(max_rank * max_rank * d, c).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        inp = fluid.data(name="input", shape=[None, d], dtype="float32")
        ro = fluid.data(name="rank_offset", shape=[None, 1 + 2 * max_rank], dtype="int32")
        out = fluid.contrib.layers.rank_attention(input=inp, rank_offset=ro, rank_param_shape=[param.shape[0], c],
                                                  rank_param_attr=fluid.ParamAttr(name="rp"), max_rank=max_rank)
        gp, = fluid.gradients([layers.reduce_sum(out)], [main.global_block().var("rp")])
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        scope.find_var("rp").get_tensor().set(param, fluid.CPUPlace())
        o, g = exe.run(main, feed={"input": x, "rank_offset": offset}, fetch_list=[out, gp])
    np.testing.assert_allclose(o, _rank_attention_numpy(x, offset, param, max_rank), rtol=1e-5)
    # d sum(Out) / d block b = sum of the X rows mapped through b, broadcast over the C columns
    want = np.zeros((max_rank * max_rank, d), "float64")
    for i in range(n):
        for k in range(max_rank):
            lower, faster = offset[i, 0] - 1, offset[i, 2 * k + 1] - 1
            if lower >= 0 and faster >= 0:
                want[lower * max_rank + faster] += x[offset[i, 2 * k + 2]]
    np.testing.assert_allclose(g, np.repeat(want.reshape(-1, 1), c, 1), rtol=1e-5)


def test_retinanet_target_assign_matches_paddle18():
    g = lambda k: REC["rta/" + k]  # noqa: E731
    na = g("anchors").shape[0]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        d = lambda n, s, t="float32", lod=0: fluid.data(n, shape=s, dtype=t, lod_level=lod)  # noqa: E731
        res = layers.retinanet_target_assign(d("bbox_pred", [2, na, 4]), d("cls_logits", [2, na, 6]),
                                             d("anchor_box", [na, 4]), d("anchor_var", [na, 4]),
                                             d("gt_boxes", [-1, 4], lod=1), d("gt_labels", [-1, 1], "int32", 1),
                                             d("is_crowd", [-1, 1], "int32", 1), d("im_info", [2, 3]), 6,
                                             positive_overlap=0.5, negative_overlap=0.4)
    op = [o for o in main.global_block().ops if o.type == "retinanet_target_assign"][0]
    raw = [op.output(slot)[0] for slot in ("LocationIndex", "ScoreIndex")]
    place = fluid.CPUPlace()
    feed = {"bbox_pred": g("bbox_pred"), "cls_logits": g("cls_logits"), "anchor_box": g("anchors"),
            "anchor_var": np.ones_like(g("anchors")), "gt_boxes": fluid.create_lod_tensor(g("gt"), [[3, 4]], place),
            "gt_labels": fluid.create_lod_tensor(g("labels"), [[3, 4]], place),
            "is_crowd": fluid.create_lod_tensor(g("crowd"), [[3, 4]], place), "im_info": g("im_info")}
    outs = fluid.Executor(place).run(main, feed=feed, fetch_list=list(res) + raw, return_numpy=False)
    names = ["logits", "boxes", "target_label", "target_bbox", "inside_weight", "fg_num", "loc_index", "score_index"]
    for name, v in zip(names, outs):
        want = g(name)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(np.array(v), want, rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(np.array(v), want, err_msg=name)
    # (Paddle also sets per-image LoDs on the outputs at run time; their variables are declared lod_level 0, in
    # Paddle as here, and ours keep no LoD.)


@pytest.mark.parametrize("case", ["rdo", "rdo_empty"])
def test_retinanet_detection_output_matches_paddle18(case):
    g = lambda k: REC[case + "/" + k]  # noqa: E731
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        bs = [fluid.data("b%d" % i, shape=list(g("b%d" % i).shape), dtype="float32") for i in range(2)]
        ss = [fluid.data("s%d" % i, shape=list(g("s%d" % i).shape), dtype="float32") for i in range(2)]
        as_ = [fluid.data("a%d" % i, shape=list(g("a%d" % i).shape), dtype="float32") for i in range(2)]
        out = layers.retinanet_detection_output(bs, ss, as_, fluid.data("im_info", shape=[2, 3], dtype="float32"),
                                                score_threshold=0.2, nms_top_k=30, keep_top_k=25,
                                                nms_threshold=0.4, nms_eta=0.9)
    feed = {"im_info": g("im_info")}
    for i in range(2):
        feed.update({"b%d" % i: g("b%d" % i), "s%d" % i: g("s%d" % i), "a%d" % i: g("a%d" % i)})
    o, = fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=[out], return_numpy=False)
    want = g("out").reshape(-1, 6)
    got = np.array(o).reshape(-1, 6)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got[:, 0], want[:, 0])
    np.testing.assert_allclose(got[:, 1:], want[:, 1:], rtol=1e-5, atol=1e-4)
    assert o.lod()[0] == g("out_lod").tolist()
