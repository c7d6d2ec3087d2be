"""Records Paddle 1.8.5's numbers for small whole training steps (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_train_step.py

Writes train_step.json beside this script: per case (train_step_cases.py), the loss of each step, an
intermediate fetched with the loss on the last step, and every persistable float variable (parameters,
velocities, batch_norm's running mean and variance, learning rates) after the last step.
"""

import json
import os
import sys

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_step_cases as C  # noqa: E402


def train(build, make_opt, feed):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        with fluid.unique_name.guard():
            loss, inter = build(fluid)
            make_opt().minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    rec = {"loss": []}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for step in range(C.STEPS):
            last = step == C.STEPS - 1
            out = exe.run(main, feed=feed, fetch_list=[loss, inter] if last else [loss])
            rec["loss"].append(float(np.array(out[0]).ravel()[0]))
        rec["inter"] = np.array(out[1]).tolist()
        rec["state"] = {}
        for v in main.global_block().all_parameters() + [v for v in main.list_vars() if v.persistable]:
            t = scope.find_var(v.name)
            if t is None or v.name in ("feed", "fetch"):
                continue
            a = np.array(t.get_tensor())
            if a.dtype == np.float32:
                rec["state"][v.name] = a.tolist()
    return rec


out = {}
for name, (build, make_opt) in sorted(C.cases(fluid).items()):
    out[name] = train(build, make_opt, C.feeds(name))
with open(os.path.join(HERE, "train_step.json"), "w") as f:
    json.dump(out, f, sort_keys=True)
print("wrote", sorted(out))
