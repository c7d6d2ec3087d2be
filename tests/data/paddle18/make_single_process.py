"""Records Paddle 1.8.5's per-step losses for the single-process parity models of tests/reference_data.py
(run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_single_process.py

Writes single_process_losses.json beside this script, keyed like tests/data/single_process_losses.json (the
Paddle 3.3.1 numbers). The two differ where Paddle changed: 1.8.5's Adam adds epsilon to sqrt(moment2)
unscaled, 2.x scales it by sqrt(1 - beta2^t).
"""

import json
import os
import sys

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
import reference_data as R  # noqa: E402

FIT_X, FIT_Y, MNIST_X, MNIST_Y = R.make_data()
FIT_INIT, MLP_INIT = R.make_init()


def train(build, feeds, steps=20):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        loss = build()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    return [float(np.array(exe.run(main, feed=feeds(s), fetch_list=[loss])[0]).ravel()[0]) for s in range(steps)]


out = {
    "note": "real PaddlePaddle 1.8.5 (CPU), recorded by make_single_process.py",
    "single_static/fit_a_line/sgd": train(lambda: R.build_fit_a_line(fluid, FIT_INIT),
                                          lambda s: {"x": R.batch(FIT_X, s), "y": R.batch(FIT_Y, s)}),
    "single_static/mlp/sgd": train(lambda: R.build_mlp(fluid, MLP_INIT, "sgd"),
                                   lambda s: {"img": R.batch(MNIST_X, s), "label": R.batch(MNIST_Y, s)}),
    "single_static/mlp/adam": train(lambda: R.build_mlp(fluid, MLP_INIT, "adam"),
                                    lambda s: {"img": R.batch(MNIST_X, s), "label": R.batch(MNIST_Y, s)}),
}
with open(os.path.join(HERE, "single_process_losses.json"), "w") as f:
    json.dump(out, f, indent=1)
print({k: v[:3] for k, v in out.items() if k != "note"})
