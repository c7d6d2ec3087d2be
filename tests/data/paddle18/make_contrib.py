"""Records Paddle 1.8.5's numbers for fluid.contrib (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_contrib.py

Writes contrib.json beside this script: AdamW (extend_with_decoupled_weight_decay) training; mixed_precision
.decorate's loss scaling (float32 compute on CPU: `mul` moved to the black list, as Paddle 1.8 has no CPU
float16 kernels) with a finite and an overflowing initial scaling; memory_usage of the model program.
"""

import json
import os
import sys

import numpy as np
import paddle.fluid as fluid
from paddle.fluid.contrib import mixed_precision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import optimizer_cases as C  # noqa: E402


def params(scope):
    return {n: np.array(scope.find_var(n).get_tensor()).tolist() for n in C.PARAMS}


def train(make_opt, watch=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        with fluid.unique_name.guard():
            loss = C.build(fluid)
            opt = make_opt()
            opt.minimize(loss)
    fetch = [loss] + ([opt.get_loss_scaling()] if watch else [])
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    rec = {"loss": [], "loss_scaling": []}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for _ in range(C.STEPS):
            res = exe.run(main, feed={"x": C.X, "y": C.Y}, fetch_list=fetch)
            rec["loss"].append(float(np.array(res[0]).ravel()[0]))
            if watch:
                rec["loss_scaling"].append(float(np.array(res[1]).ravel()[0]))
        rec["params"] = params(scope)
    return rec


def amp(init, **kw):
    lists = mixed_precision.AutoMixedPrecisionLists(custom_black_list={"mul"})
    return lambda: mixed_precision.decorate(fluid.optimizer.SGD(0.1), amp_lists=lists, init_loss_scaling=init, **kw)


AdamW = fluid.contrib.extend_with_decoupled_weight_decay(fluid.optimizer.Adam)
out = {
    "adamw": train(lambda: AdamW(weight_decay=0.1, learning_rate=0.05)),
    "adamw_only_w": train(lambda: AdamW(weight_decay=0.1, apply_decay_param_fun=lambda n: n.startswith("w"),
                                        learning_rate=0.05)),
    "amp_dynamic": train(amp(8.0, incr_every_n_steps=2, decr_every_n_nan_or_inf=1), watch=True),
    "amp_overflow": train(amp(1e38, incr_every_n_steps=2, decr_every_n_nan_or_inf=2, decr_ratio=0.5), watch=True),
    "amp_static": train(amp(64.0, use_dynamic_loss_scaling=False), watch=True),
}
main, startup = fluid.Program(), fluid.Program()
with fluid.program_guard(main, startup):
    x = fluid.layers.data("x", shape=[13], dtype="float32")
    h = fluid.layers.fc(x, 20, act="relu")
    fluid.layers.fc(h, 3)
out["memory_usage_b10"] = list(fluid.contrib.memory_usage(main, batch_size=10))
with open(os.path.join(HERE, "contrib.json"), "w") as f:
    json.dump(out, f, sort_keys=True)
print({k: (v["loss_scaling"] if isinstance(v, dict) else v) for k, v in out.items()})
