"""Records the detection_map op and fluid.metrics.DetectionMAP from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_detection_map.py

Writes detection_map.json beside this script: for each case (ap_version, evaluate_difficult, background_label)
the current and accumulated mAP of three batches of random detections (two images each, some classes missing
on either side, difficult boxes) run through DetectionMAP, with the accumulated states after the last batch;
and the ops DetectionMAP records. tests/unit/test_detection_map_paddle18.py runs the same (run() takes the
fluid module).
"""

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CLASS_NUM = 4
CASES = {"integral": ("integral", True, 0), "11point": ("11point", True, 0),
         "no_difficult": ("integral", False, 0), "no_background": ("11point", False, -1)}


def batches(seed=3, n=3):
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(n):
        dets, det_lod, gts, gt_lod = [], [0], [], [0]
        for _img in range(2):
            k = rng.randint(1, 6)
            boxes = []
            for _ in range(k):
                x0, y0 = rng.uniform(0, 0.6, 2)
                boxes.append([rng.randint(0, CLASS_NUM), x0, y0, x0 + rng.uniform(0.1, 0.4), y0 + rng.uniform(0.1, 0.4)])
            for b in boxes:
                gts.append([b[0], float(rng.rand() < 0.25)] + b[1:])
            gt_lod.append(gt_lod[-1] + k)
            m = rng.randint(1, 8)
            for _ in range(m):
                if rng.rand() < 0.6:        # near a ground-truth box, sometimes with another label
                    b = boxes[rng.randint(0, k)]
                    lab = b[0] if rng.rand() < 0.8 else rng.randint(0, CLASS_NUM)
                    box = [c + rng.uniform(-0.08, 0.08) for c in b[1:]]
                else:
                    lab = rng.randint(0, CLASS_NUM)
                    x0, y0 = rng.uniform(0, 0.7, 2)
                    box = [x0, y0, x0 + 0.2, y0 + 0.2]
                dets.append([lab, round(float(rng.rand()), 3)] + box)
            det_lod.append(det_lod[-1] + m)
        out.append((np.array(dets, "float32"), det_lod, np.array(gts, "float32"), gt_lod))
    return out


def _lod_tensor(fluid, arr, lod):
    t = fluid.LoDTensor()
    t.set(arr, fluid.CPUPlace())
    t.set_lod([lod])
    return t


def run(fluid, case):
    ap_version, evaluate_difficult, background = CASES[case]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        L = fluid.layers
        det = L.data(name="det", shape=[6], dtype="float32", lod_level=1)
        gt_label = L.data(name="gt_label", shape=[1], dtype="float32", lod_level=1)
        difficult = L.data(name="difficult", shape=[1], dtype="float32", lod_level=1)
        gt_box = L.data(name="gt_box", shape=[4], dtype="float32", lod_level=1)
        m = fluid.metrics.DetectionMAP(det, gt_label, gt_box, difficult, class_num=CLASS_NUM,
                                       background_label=background, evaluate_difficult=evaluate_difficult,
                                       ap_version=ap_version)
        cur, accum = m.get_map_var()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    maps = []
    with fluid.scope_guard(scope):
        exe.run(startup)
        m.reset(exe)
        for dets, det_lod, gts, gt_lod in batches():
            feed = {"det": _lod_tensor(fluid, dets, det_lod), "gt_label": _lod_tensor(fluid, gts[:, :1], gt_lod),
                    "difficult": _lod_tensor(fluid, gts[:, 1:2], gt_lod), "gt_box": _lod_tensor(fluid, gts[:, 2:], gt_lod)}
            c, a = exe.run(main, feed=feed, fetch_list=[cur, accum])
            maps.append([float(np.array(c).reshape(-1)[0]), float(np.array(a).reshape(-1)[0])])
        states = {}
        for v in main.global_block().vars.values():
            if v.persistable and v.name.startswith("map_eval"):
                t = scope.find_var(v.name).get_tensor()
                states[v.name] = {"value": np.array(t).tolist(), "lod": [list(l) for l in t.lod()]}
    return {"maps": maps, "states": states, "ops": [op.type for op in main.global_block().ops]}


def main():
    import paddle.fluid as fluid
    out = {case: run(fluid, case) for case in CASES}
    with open(os.path.join(HERE, "detection_map.json"), "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print({k: v["maps"] for k, v in out.items()})


if __name__ == "__main__":
    main()
