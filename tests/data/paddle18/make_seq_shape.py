"""Records sequence_reverse, sequence_pad, sequence_unpad and sequence_expand_as forward and gradient numbers
from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_seq_shape.py
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
LENS = [3, 1, 4, 2]
X = np.random.RandomState(1).uniform(-1, 1, size=(sum(LENS), 3)).astype("float32")
E = np.random.RandomState(2).uniform(-1, 1, size=(len(LENS), 3)).astype("float32")


def case(kind, maxlen=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3], dtype="float32", lod_level=1)
        x.stop_gradient = False
        e = fluid.layers.data("e", shape=[3], dtype="float32")
        e.stop_gradient = False
        fetch = []
        if kind == "reverse":
            out = fluid.layers.sequence_reverse(x)
        elif kind == "pad":
            pv = fluid.layers.assign(np.array([0.5], "float32"))
            out, length = fluid.layers.sequence_pad(x, pv, maxlen=maxlen)
            fetch = [length]
        elif kind == "pad_unpad":
            pv = fluid.layers.assign(np.array([-1.0, 0.0, 2.0], "float32"))
            padded, length = fluid.layers.sequence_pad(x, pv, maxlen=maxlen)
            out = fluid.layers.sequence_unpad(padded * 2.0, length)
        else:
            out = fluid.layers.sequence_expand_as(e, x)
        loss = fluid.layers.reduce_sum(out * out * 0.5 + out * fluid.layers.reduce_sum(out))
        gx, ge = fluid.gradients([loss], [x, e])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    feed = {"x": fluid.create_lod_tensor(X, [LENS], fluid.CPUPlace()), "e": E}
    grads = [g for g in (gx, ge) if g is not None]
    res = exe.run(main, feed=feed, fetch_list=[out] + fetch + grads, return_numpy=False)
    out_t = res[0]
    r = {"kind": kind, "maxlen": maxlen, "out": np.array(out_t).tolist(), "out_lod": out_t.lod(),
         "grads": {g.name.split("@")[0]: np.array(v).tolist() for g, v in zip(grads, res[1 + len(fetch):])}}
    if fetch:
        r["length"] = np.array(res[1]).tolist()
    return r


cases = [case("reverse"), case("pad"), case("pad", maxlen=6), case("pad_unpad", maxlen=5), case("expand_as")]
with open(os.path.join(HERE, "seq_shape.json"), "w") as f:
    json.dump({"lens": LENS, "x": X.tolist(), "e": E.tolist(), "cases": cases}, f)
print("wrote", len(cases), "cases", [sorted(c["grads"]) for c in cases])
