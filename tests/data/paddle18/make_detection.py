"""Records, from real PaddlePaddle 1.8.5 (run outside CI):
  - sigmoid_focal_loss: Out and d(sum(Out * w))/dX for a few label/fg_num/gamma/alpha cases;
  - roi_perspective_transform: Out, Mask, TransformMatrix and the input gradient;
  - retinanet_target_assign on two images: its outputs and their LoDs;
  - retinanet_detection_output on two images of two FPN levels, and with nothing detected;
  - the ops and output variables (shape, dtype, lod_level, stop_gradient) that retinanet_target_assign,
    retinanet_detection_output, roi_perspective_transform and contrib.rank_attention build (they run only on
    GPU, or not at all here), from the programs of Paddle's own test_layers.py cases.

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_detection.py

Writes detection.npz (focal loss) and detection_programs.json beside this script.
"""

import json
import os

import numpy as np
import paddle.fluid as fluid
from paddle.fluid import layers

HERE = os.path.dirname(os.path.abspath(__file__))

FOCAL = [("basic", 6, 5, 2.0, 0.25, 3), ("ignored_rows", 8, 4, 1.5, 0.4, 0), ("gamma0", 5, 3, 0.0, 0.5, 7)]


def focal(name, n, c, gamma, alpha, fg):
    r = np.random.RandomState(n * 10 + c)
    x = r.uniform(-4, 4, size=(n, c)).astype("float32")
    x[0, 0] = 30.0      # saturated sigmoid: Paddle's FLT_MIN clamp and overflow-safe log(1 - p)
    x[1, 0] = -30.0
    label = r.randint(-1, c + 1, size=(n, 1)).astype("int32")
    w = r.uniform(0.5, 1.5, size=(n, c)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", shape=[n, c], dtype="float32")
        xv.stop_gradient = False
        lv = fluid.data("label", shape=[n, 1], dtype="int32")
        fv = fluid.data("fg", shape=[1], dtype="int32")
        wv = fluid.data("w", shape=[n, c], dtype="float32")
        out = layers.sigmoid_focal_loss(xv, lv, fv, gamma=gamma, alpha=alpha)
        gx, = fluid.gradients([layers.reduce_sum(out * wv)], [xv])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    o, g = exe.run(main, feed={"x": x, "label": label, "fg": np.array([fg], "int32"), "w": w}, fetch_list=[out, gx])
    p = "focal_%s/" % name
    return {p + "x": x, p + "label": label, p + "w": w, p + "out": o, p + "grad_x": g,
            p + "attrs": np.array([gamma, alpha, fg], "float64")}


RPT_ROIS = [[2, 2, 20, 3, 19, 16, 3, 14],          # image 0: a skewed quad
            [4, 4, 14, 4, 14, 10, 4, 10],          # image 0: an axis-aligned rectangle
            [10, 0, 30, 6, 26, 22, 6, 18],         # image 1: rotated, partly off the map
            [0, 0, 27, 0, 27, 23, 0, 23]]          # image 1: the whole map


def perspective():
    """roi_perspective_transform: Out, Mask, TransformMatrix and d(sum(Out * w))/dX (its CPU kernel)."""
    r = np.random.RandomState(5)
    x = r.rand(2, 3, 12, 14).astype("float32")
    rois = np.array(RPT_ROIS, "float32")
    w = r.uniform(0.5, 1.5, size=(4, 3, 5, 6)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", shape=[2, 3, 12, 14], dtype="float32")
        xv.stop_gradient = False
        rv = fluid.data("rois", shape=[-1, 8], dtype="float32", lod_level=1)
        wv = fluid.data("w", shape=[4, 3, 5, 6], dtype="float32")
        out, mask, matrix = layers.roi_perspective_transform(xv, rv, 5, 6, 0.5)
        gx, = fluid.gradients([layers.reduce_sum(out * wv)], [xv])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    res = exe.run(main, feed={"x": x, "rois": fluid.create_lod_tensor(rois, [[2, 2]], fluid.CPUPlace()), "w": w},
                  fetch_list=[out, mask, matrix, gx], return_numpy=False)
    res = [np.array(v) for v in res]
    return {"rpt/x": x, "rpt/rois": rois, "rpt/w": w, "rpt/out": res[0], "rpt/mask": res[1], "rpt/matrix": res[2],
            "rpt/grad_x": res[3]}


def target_assign():
    """retinanet_target_assign run on 2 images (a crowd box, a box scaled away by im_scale, ties): its six outputs
    and the gathered logits / boxes the layer returns."""
    r = np.random.RandomState(11)
    xs, ys = np.meshgrid(np.arange(0, 64, 8), np.arange(0, 48, 8))
    anchors = np.stack([xs.ravel(), ys.ravel(), xs.ravel() + 15, ys.ravel() + 11], 1).astype("float32")   # [48, 4]
    na = anchors.shape[0]
    gt = np.array([[0, 0, 15, 11], [20, 10, 44, 30], [5, 30, 30, 46],                        # image 0
                   [8, 8, 23, 19], [40, 0, 63, 20], [0, 0, 70, 50], [30, 24, 47, 35]], "float32")   # image 1
    labels = np.array([[3], [1], [2], [4], [2], [1], [5]], "int32")
    crowd = np.array([[0], [0], [0], [0], [0], [1], [0]], "int32")
    im_info = np.array([[48, 64, 1.0], [48, 64, 0.9]], "float32")
    bbox_pred = r.rand(2, na, 4).astype("float32")
    cls_logits = r.rand(2, na, 6).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        d = lambda n, s, t="float32", lod=0: fluid.data(n, shape=s, dtype=t, lod_level=lod)  # noqa: E731
        res = layers.retinanet_target_assign(d("bbox_pred", [2, na, 4]), d("cls_logits", [2, na, 6]),
                                             d("anchor_box", [na, 4]), d("anchor_var", [na, 4]),
                                             d("gt_boxes", [-1, 4], lod=1), d("gt_labels", [-1, 1], "int32", 1),
                                             d("is_crowd", [-1, 1], "int32", 1), d("im_info", [2, 3]), 6,
                                             positive_overlap=0.5, negative_overlap=0.4)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    place = fluid.CPUPlace()
    feed = {"bbox_pred": bbox_pred, "cls_logits": cls_logits, "anchor_box": anchors,
            "anchor_var": np.ones_like(anchors), "gt_boxes": fluid.create_lod_tensor(gt, [[3, 4]], place),
            "gt_labels": fluid.create_lod_tensor(labels, [[3, 4]], place),
            "is_crowd": fluid.create_lod_tensor(crowd, [[3, 4]], place), "im_info": im_info}
    op = [o for o in main.global_block().ops if o.type == "retinanet_target_assign"][0]
    raw = [op.output(slot)[0] for slot in ("LocationIndex", "ScoreIndex")]
    outs = exe.run(main, feed=feed, fetch_list=list(res) + raw, return_numpy=False)
    data = {"rta/anchors": anchors, "rta/gt": gt, "rta/labels": labels, "rta/crowd": crowd, "rta/im_info": im_info,
            "rta/bbox_pred": bbox_pred, "rta/cls_logits": cls_logits}
    for name, v in zip(["logits", "boxes", "target_label", "target_bbox", "inside_weight", "fg_num", "loc_index",
                        "score_index"], outs):
        data["rta/" + name] = np.array(v)
        data["rta/" + name + "_lod"] = np.array(v.lod()[0] if v.lod() else [], "int64")
    return data


def detection_output(name, empty=False):
    """retinanet_detection_output over 2 images and 2 FPN levels (overlapping anchors, so NMS has work)."""
    r = np.random.RandomState(21)
    levels = []
    for lvl, (step, size) in enumerate(((8, 16), (16, 32))):
        xs, ys = np.meshgrid(np.arange(0, 48, step), np.arange(0, 40, step))
        anchors = np.stack([xs.ravel(), ys.ravel(), xs.ravel() + size - 1, ys.ravel() + size - 1], 1).astype("float32")
        m = anchors.shape[0]
        deltas = r.uniform(-0.3, 0.3, size=(2, m, 4)).astype("float32")
        scores = r.uniform(0, 1, size=(2, m, 3)).astype("float32") ** 3
        if empty:
            scores[:] = 0.01 if lvl == 0 else 0.0
        levels.append((anchors, deltas, scores))
    im_info = np.array([[40, 48, 1.0], [80, 96, 2.0]], "float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        bs, ss, as_ = [], [], []
        for lvl, (anchors, deltas, scores) in enumerate(levels):
            bs.append(fluid.data("b%d" % lvl, shape=list(deltas.shape), dtype="float32"))
            ss.append(fluid.data("s%d" % lvl, shape=list(scores.shape), dtype="float32"))
            as_.append(fluid.data("a%d" % lvl, shape=list(anchors.shape), dtype="float32"))
        out = layers.retinanet_detection_output(bs, ss, as_, fluid.data("im_info", shape=[2, 3], dtype="float32"),
                                                score_threshold=0.2, nms_top_k=30, keep_top_k=25,
                                                nms_threshold=0.4, nms_eta=0.9)
    feed = {"im_info": im_info}
    data = {"%s/im_info" % name: im_info}
    for lvl, (anchors, deltas, scores) in enumerate(levels):
        feed.update({"b%d" % lvl: deltas, "s%d" % lvl: scores, "a%d" % lvl: anchors})
        data.update({"%s/b%d" % (name, lvl): deltas, "%s/s%d" % (name, lvl): scores, "%s/a%d" % (name, lvl): anchors})
    exe = fluid.Executor(fluid.CPUPlace())
    o, = exe.run(main, feed=feed, fetch_list=[out], return_numpy=False)
    data["%s/out" % name] = np.array(o)
    data["%s/out_lod" % name] = np.array(o.lod()[0], "int64")
    return data


def programs():
    """{case: [[op type, {output slot: [[shape], dtype, lod_level, stop_gradient]}]]} for the building cases."""
    def describe(main, types):
        block, res = main.global_block(), []
        for op in block.ops:
            if op.type in types:
                res.append([op.type, {s: [[list(block.var(n).shape), str(block.var(n).dtype).split(".")[-1],
                                           block.var(n).lod_level, block.var(n).stop_gradient]
                                          for n in op.output(s)] for s in op.output_names},
                            sorted(op.input_names), {k: op.attr(k) for k in op.attr_names if not k.startswith("op_")}])
        return res

    out = {}
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        d = lambda n, s, t="float32": layers.data(name=n, shape=s, append_batch_size=False, dtype=t)  # noqa: E731
        layers.retinanet_target_assign(d("bbox_pred", [1, 100, 4]), d("cls_logits", [1, 100, 10]),
                                       d("anchor_box", [100, 4]), d("anchor_var", [100, 4]), d("gt_boxes", [10, 4]),
                                       d("gt_labels", [10, 1], "int32"), d("is_crowd", [1], "int32"),
                                       d("im_info", [1, 3]), 10)
    out["retinanet_target_assign"] = describe(main, {"retinanet_target_assign", "gather", "reshape2"})
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        b, s, a = d("bboxes", [1, 21, 4]), d("scores", [1, 21, 10]), d("anchors", [21, 4])
        layers.retinanet_detection_output(bboxes=[b, b], scores=[s, s], anchors=[a, a], im_info=d("im_info", [1, 3]),
                                          score_threshold=0.05, nms_top_k=1000, keep_top_k=100, nms_threshold=0.3,
                                          nms_eta=1.)
    out["retinanet_detection_output"] = describe(main, {"retinanet_detection_output"})
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = layers.data(name="x", shape=[256, 30, 30], dtype="float32")
        rois = layers.data(name="rois", shape=[8], dtype="float32", lod_level=1)
        layers.roi_perspective_transform(x, rois, 7, 7, 0.6)
    out["roi_perspective_transform"] = describe(main, {"roi_perspective_transform"})
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        inp = fluid.data(name="input", shape=[None, 2], dtype="float32")
        ro = fluid.data(name="rank_offset", shape=[None, 7], dtype="int32")
        fluid.contrib.layers.rank_attention(input=inp, rank_offset=ro, rank_param_shape=[18, 3],
                                            rank_param_attr=fluid.ParamAttr(name="ubm_rank_param.w_0"), max_rank=3)
    out["rank_attention"] = describe(main, {"rank_attention"})
    return out


def main():
    data = {}
    for c in FOCAL:
        data.update(focal(*c))
    data.update(perspective())
    data.update(target_assign())
    data.update(detection_output("rdo"))
    data.update(detection_output("rdo_empty", empty=True))
    np.savez(os.path.join(HERE, "detection.npz"), **data)
    with open(os.path.join(HERE, "detection_programs.json"), "w") as fh:
        json.dump(programs(), fh, sort_keys=True)
    print(sorted(data))


if __name__ == "__main__":
    main()
