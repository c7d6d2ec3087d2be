"""Records Paddle 1.8.5's numbers on edge cases where its kernels clip or add epsilons (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_fidelity.py

Writes fidelity.json beside this script: per case, the forward output and the gradient of sum(out * w).
"""

import json
import os
import sys

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fidelity_cases import cases  # noqa: E402


def weight_like(shape):
    n = int(np.prod(shape))
    return np.linspace(-1.0, 1.5, n, dtype="float32").reshape(shape)


def enc(a):
    a = np.asarray(a, dtype="float64")
    return [repr(float(v)) for v in a.ravel()], list(a.shape)


def run(name, inputs, grads, build):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = {}
        for k, a in inputs.items():
            v[k] = fluid.layers.data(k, shape=list(a.shape), dtype=str(a.dtype), append_batch_size=False)
            v[k].stop_gradient = k not in grads
        out = build(v)
        w = fluid.layers.data("w__", shape=list(out.shape), dtype="float32", append_batch_size=False)
        loss = fluid.layers.reduce_sum(out * w)
        gvars = fluid.gradients([loss], [v[k] for k in grads]) if grads else []
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    feed = dict(inputs)
    feed["w__"] = weight_like(out.shape)
    res = exe.run(main, feed=feed, fetch_list=[out] + list(gvars))
    rec = {"out": enc(res[0])}
    for k, g in zip(grads, res[1:]):
        rec["grad_" + k] = enc(g)
    return rec


recs = {name: run(name, *spec) for name, spec in sorted(cases(fluid).items())}
with open(os.path.join(HERE, "fidelity.json"), "w") as f:
    json.dump(recs, f, indent=0, sort_keys=True)
print("wrote", len(recs), "cases")
