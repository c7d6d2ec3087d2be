"""Records linear_chain_crf (cost and gradients) and crf_decoding (path, and the 0/1 agreement with a label)
numbers from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_crf.py

Writes crf.json beside this script.
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))


def case(lens, tags, seed):
    r = np.random.RandomState(seed)
    em = r.uniform(-2, 2, size=(sum(lens), tags)).astype("float32")
    lab = r.randint(0, tags, size=(sum(lens), 1)).astype("int64")
    trans = r.uniform(-1, 1, size=(tags + 2, tags)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[tags], dtype="float32", lod_level=1)
        x.stop_gradient = False
        y = fluid.layers.data("y", shape=[1], dtype="int64", lod_level=1)
        cost = fluid.layers.linear_chain_crf(x, y, param_attr=fluid.ParamAttr(name="crfw"))
        path = fluid.layers.crf_decoding(x, param_attr=fluid.ParamAttr(name="crfw"))
        right = fluid.layers.crf_decoding(x, param_attr=fluid.ParamAttr(name="crfw"), label=y)
        loss = fluid.layers.reduce_sum(cost * cost * 0.1 + cost)
        gx, gw = fluid.gradients([loss], [x, main.global_block().var("crfw")])
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        scope.find_var("crfw").get_tensor().set(trans, fluid.CPUPlace())
        feed = {"x": fluid.create_lod_tensor(em, [lens], fluid.CPUPlace()),
                "y": fluid.create_lod_tensor(lab, [lens], fluid.CPUPlace())}
        res = [np.array(v).tolist() for v in exe.run(main, feed=feed, fetch_list=[cost, path, right, gx, gw],
                                                      return_numpy=False)]
    return {"lens": lens, "emission": em.tolist(), "label": lab.tolist(), "transition": trans.tolist(),
            "cost": res[0], "path": res[1], "right": res[2], "grad_emission": res[3], "grad_transition": res[4]}


cases = [case([3, 1, 5, 2], 4, 1), case([6, 2], 3, 2), case([1, 1, 1], 5, 3)]
with open(os.path.join(HERE, "crf.json"), "w") as f:
    json.dump({"cases": cases}, f)
print("wrote", len(cases), "cases")
