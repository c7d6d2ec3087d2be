"""Records chunk_eval, warpctc (loss and logits gradient) and ctc_greedy_decoder outputs from real PaddlePaddle
1.8.5 (run outside CI, from a directory outside the checkout):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_ctc_chunk.py

Writes ctc_chunk.npz beside this script (cases in ctc_chunk_cases.py).
"""

import os
import sys

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ctc_chunk_cases import cases, run  # noqa: E402

rec = {}
for name, case in cases().items():
    for i, item in enumerate(run(fluid, case)):
        if isinstance(item, tuple):
            rec["%s/%d" % (name, i)] = item[0]
            if item[1] is not None:
                rec["%s/%d/lod" % (name, i)] = np.array(item[1], "int64")
        else:
            rec["%s/%d" % (name, i)] = item
np.savez(os.path.join(HERE, "ctc_chunk.npz"), **rec)
print("wrote", len(cases()), "cases")
