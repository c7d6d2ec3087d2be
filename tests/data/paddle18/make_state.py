"""Records Paddle 1.8.5's fluid.save files and the losses after loading them (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_state.py

Trains the optimizer_cases model 2 steps with Adam, fluid.save()s it to state/adam_step2.pdparams/.pdopt
(the .pdmodel, Paddle's protobuf, is not kept), then in a fresh scope fluid.load()s them and records the losses
of 2 more steps in state.json.
"""

import json
import os
import sys

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import optimizer_cases as C  # noqa: E402

main, startup = fluid.Program(), fluid.Program()
with fluid.program_guard(main, startup), fluid.unique_name.guard():
    loss = C.build(fluid)
    fluid.optimizer.Adam(0.05).minimize(loss)
exe = fluid.Executor(fluid.CPUPlace())
path = os.path.join(HERE, "state", "adam_step2")
with fluid.scope_guard(fluid.Scope()):
    exe.run(startup)
    for _ in range(2):
        exe.run(main, feed={"x": C.X, "y": C.Y}, fetch_list=[loss])
    fluid.save(main, path)
os.remove(path + ".pdmodel")
losses = []
with fluid.scope_guard(fluid.Scope()):
    exe.run(startup)
    fluid.load(main, path, exe)
    for _ in range(2):
        losses.append(float(np.array(exe.run(main, feed={"x": C.X, "y": C.Y}, fetch_list=[loss])[0]).ravel()[0]))
with open(os.path.join(HERE, "state.json"), "w") as f:
    json.dump({"losses_after_load": losses,
               "opt_names": sorted(fluid.io.load_program_state(path).keys())}, f, indent=1)
print(losses)
