"""Records nce, hsigmoid and sampled_softmax_with_cross_entropy numbers from real PaddlePaddle 1.8.5 (run
outside CI, from a directory outside the checkout):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_sampled_loss.py

Writes sampled_loss.npz beside this script (cases in sampled_loss_cases.py).
"""

import os
import sys

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sampled_loss_cases import cases, run  # noqa: E402

rec = {}
for name, case in cases().items():
    for k, a in run(fluid, name, case).items():
        rec["%s/%s" % (name, k)] = a
np.savez(os.path.join(HERE, "sampled_loss.npz"), **rec)
print("wrote", len(cases()), "cases")
