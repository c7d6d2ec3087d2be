"""Records one step of Paddle 1.8.5's dense `adam` kernel (CPU, float32) on random state, from real
PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_adam_kernel.py

Gradients and second moments span many magnitudes, so epsilon and every rounding of the update matter.
Writes adam_kernel.npz: in_<slot> for the op's inputs, out_<slot> for ParamOut/Moment1Out/Moment2Out."""

import os

import numpy as np
from paddle.fluid import core
from paddle.fluid.op import Operator

HERE = os.path.dirname(os.path.abspath(__file__))
N = 4096


def main():
    rs = np.random.RandomState(0)
    ins = {"Param": rs.randn(N).astype(np.float32),
           "Grad": (rs.randn(N) * np.exp(rs.uniform(-12, 2, N))).astype(np.float32),
           "Moment1": (rs.randn(N) * 0.1).astype(np.float32),
           "Moment2": (rs.rand(N) * np.exp(rs.uniform(-30, 0, N))).astype(np.float32),
           "LearningRate": np.array([0.01], np.float32),
           "Beta1Pow": np.array([0.9 ** 3], np.float32), "Beta2Pow": np.array([0.999 ** 3], np.float32)}
    scope, place = core.Scope(), core.CPUPlace()
    for name, value in ins.items():
        scope.var(name).get_tensor().set(value.copy(), place)
    outs = ["ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut"]
    for name in outs:
        scope.var(name).get_tensor()
    slots = dict((k, k) for k in list(ins) + outs)
    Operator("adam", beta1=0.9, beta2=0.999, epsilon=1e-8, **slots).run(scope, place)
    got = {"out_" + k: np.array(scope.find_var(k).get_tensor()) for k in outs[:3]}
    np.savez_compressed(os.path.join(HERE, "adam_kernel.npz"), **dict(("in_" + k, v) for k, v in ins.items()),
                        **got)


if __name__ == "__main__":
    main()
