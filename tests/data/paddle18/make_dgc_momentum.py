"""Records Paddle 1.8.5's dgc_momentum op on one small case before and after its rampup step (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_dgc_momentum.py

Writes dgc_momentum.json next to this file: {step: [ParamOut, VelocityOut, Grad_out]} for the inputs below.
"""

import json
import os

import numpy as np
from paddle.fluid import core
from paddle.fluid.op import Operator

INPUTS = {"Param": [[1.0, 2.0]], "Grad": [[0.5, -1.0]], "Velocity": [[0.2, 0.3]], "LearningRate": [0.1],
          "nranks": [2.0]}
ATTRS = {"mu": 0.5, "use_nesterov": False, "rampup_begin_step": 10.0}


def main():
    out = {"inputs": INPUTS, "attrs": ATTRS, "steps": {}}
    for step in (0.0, 9.0, 10.0, 15.0):
        scope, place = core.Scope(), core.CPUPlace()
        for n, v in dict(INPUTS, current_step=[step]).items():
            scope.var(n).get_tensor().set(np.array(v, "float32"), place)
        Operator("dgc_momentum", Param="Param", Grad="Grad", Velocity="Velocity", LearningRate="LearningRate",
                 current_step="current_step", nranks="nranks", ParamOut="Param", VelocityOut="Velocity",
                 Grad_out="Grad", **ATTRS).run(scope, place)
        out["steps"][str(step)] = [np.array(scope.find_var(n).get_tensor()).tolist()
                                   for n in ("Param", "Velocity", "Grad")]
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "dgc_momentum.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
