"""Records the MultiSlot text lines that Paddle 1.8.5's data_generator writes (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_data_generator.py

Writes data_generator.json beside this script (the cases live in data_generator_cases.py).
"""

import json
import os
import sys

import paddle.fluid.incubate.data_generator as dg

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from data_generator_cases import cases  # noqa: E402

with open(os.path.join(HERE, "data_generator.json"), "w") as f:
    json.dump(cases(dg), f, indent=1, sort_keys=True)
print("wrote data_generator.json")
