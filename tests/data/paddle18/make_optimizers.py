"""Records Paddle 1.8.5's training numbers for the optimizers (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_optimizers.py

Writes optimizers.json beside this script: per optimizer, the loss of each step and the parameters after the
last; for ExponentialMovingAverage / ModelAverage the parameters inside and after apply(); for Lookahead and
Recompute the same as for the plain optimizers (model and data: optimizer_cases.py).
"""

import json
import os
import sys

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import optimizer_cases as C  # noqa: E402


def params(scope):
    return {n: np.array(scope.find_var(n).get_tensor()).tolist() for n in C.PARAMS}


def train(make_opt, extra=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        with fluid.unique_name.guard():
            loss = C.build(fluid)
            opt = make_opt()
            if isinstance(opt, fluid.optimizer.RecomputeOptimizer):
                opt._set_checkpoints([main.global_block().var("w1")])
            opt.minimize(loss)
            avg = extra() if extra else None
            if isinstance(avg, fluid.optimizer.ExponentialMovingAverage):
                avg.update()
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    rec = {"loss": []}
    with fluid.scope_guard(scope):
        exe.run(startup)
        for _ in range(C.STEPS):
            l, = exe.run(main, feed={"x": C.X, "y": C.Y}, fetch_list=[loss])
            rec["loss"].append(float(np.array(l).ravel()[0]))
        rec["params"] = params(scope)
        if avg is not None:
            with avg.apply(exe):
                rec["applied"] = params(scope)
            rec["restored"] = params(scope)
    return rec


out = {name: train(make) for name, make in sorted(C.optimizers(fluid).items())}
O = fluid.optimizer
out["lookahead"] = train(lambda: O.LookaheadOptimizer(O.SGD(0.1), alpha=0.5, k=2))
out["recompute_adam"] = train(lambda: O.RecomputeOptimizer(O.Adam(0.05)))
out["ema"] = train(lambda: O.SGD(0.1), lambda: O.ExponentialMovingAverage(0.9))
out["ema_thres_steps"] = train(lambda: O.SGD(0.1), lambda: O.ExponentialMovingAverage(
    0.9, thres_steps=fluid.layers.autoincreased_step_counter(counter_name="@THRES_STEP@")))
out["ema_float_thres_steps"] = train(lambda: O.SGD(0.1), lambda: O.ExponentialMovingAverage(
    0.9, thres_steps=fluid.layers.cast(fluid.layers.autoincreased_step_counter(counter_name="@THRES_STEP@"),
                                       "float32")))
out["model_average"] = train(lambda: O.SGD(0.1), lambda: O.ModelAverage(0.5, min_average_window=2,
                                                                          max_average_window=3))
with open(os.path.join(HERE, "optimizers.json"), "w") as f:
    json.dump(out, f, sort_keys=True)
print("wrote", sorted(out))
