"""Records, from real PaddlePaddle 1.8.5 (run outside CI):
  - sigmoid_focal_loss: Out and d(sum(Out * w))/dX for a few label/fg_num/gamma/alpha cases;
  - roi_perspective_transform: Out, Mask, TransformMatrix and the input gradient;
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
    np.savez(os.path.join(HERE, "detection.npz"), **data)
    with open(os.path.join(HERE, "detection_programs.json"), "w") as fh:
        json.dump(programs(), fh, sort_keys=True)
    print(sorted(data))


if __name__ == "__main__":
    main()
