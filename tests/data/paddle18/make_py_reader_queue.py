"""Records Paddle 1.8.5's py_reader fed through py_reader.queue.push by the script (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_py_reader_queue.py

Writes py_reader_queue.json beside this script (the cases live in py_reader_queue_cases.py).
"""

import json
import os
import sys

import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from py_reader_queue_cases import cases  # noqa: E402

with open(os.path.join(HERE, "py_reader_queue.json"), "w") as f:
    json.dump(cases(fluid), f, indent=1, sort_keys=True)
print("wrote py_reader_queue.json")
