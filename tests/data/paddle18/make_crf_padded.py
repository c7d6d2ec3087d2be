"""Records the padded form of linear_chain_crf / crf_decoding (Emission [N, L, D], Label [N, L], Length [N]):
cost, gradients w.r.t. emission and transition, the Viterbi path and its 0/1 agreement with the label, and
chunk_eval over the path with seq_length, from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_crf_padded.py

Writes crf_padded.json beside this script.
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))


def case(lens, width, tags, seed):
    r = np.random.RandomState(seed)
    n = len(lens)
    em = r.uniform(-2, 2, size=(n, width, tags)).astype("float32")
    lab = r.randint(0, tags, size=(n, width)).astype("int64")
    trans = r.uniform(-1, 1, size=(tags + 2, tags)).astype("float32")
    length = np.array(lens, "int64")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", shape=[n, width, tags], dtype="float32")
        x.stop_gradient = False
        y = fluid.data("y", shape=[n, width], dtype="int64")
        ln = fluid.data("len", shape=[n], dtype="int64")
        cost = fluid.layers.linear_chain_crf(x, y, param_attr=fluid.ParamAttr(name="crfw"), length=ln)
        path = fluid.layers.crf_decoding(x, param_attr=fluid.ParamAttr(name="crfw"), length=ln)
        right = fluid.layers.crf_decoding(x, param_attr=fluid.ParamAttr(name="crfw"), label=y, length=ln)
        chunks = fluid.layers.chunk_eval(path, y, chunk_scheme="IOB", num_chunk_types=(tags - 1) // 2,
                                         seq_length=ln)
        loss = fluid.layers.reduce_sum(cost * cost * 0.1 + cost)
        gx, gw = fluid.gradients([loss], [x, main.global_block().var("crfw")])
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        scope.find_var("crfw").get_tensor().set(trans, fluid.CPUPlace())
        res = [np.array(v).tolist() for v in exe.run(
            main, feed={"x": em, "y": lab, "len": length},
            fetch_list=[cost, path, right, gx, gw] + list(chunks[3:]))]
    return {"lens": lens, "emission": em.tolist(), "label": lab.tolist(), "transition": trans.tolist(),
            "cost": res[0], "path": res[1], "right": res[2], "grad_emission": res[3], "grad_transition": res[4],
            "chunk_counts": [int(np.array(v).ravel()[0]) for v in res[5:]]}


cases = [case([3, 1, 5, 2], 5, 5, 1), case([6, 2], 7, 3, 2), case([1, 4, 4], 4, 5, 3)]
with open(os.path.join(HERE, "crf_padded.json"), "w") as f:
    json.dump({"cases": cases}, f)
print("wrote", len(cases), "cases")
