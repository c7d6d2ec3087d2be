"""Records the attributes of every op of a few programs built by real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_op_attrs.py

Writes op_attrs.json beside this script (op_attr_cases.record(): each op's type and attributes, the defaults
Paddle's attribute checker fills in included), which tests/unit/test_op_attrs_paddle18.py compares with ours.
"""

import json
import os
import sys

import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import op_attr_cases  # noqa: E402

rec = op_attr_cases.record(fluid)
with open(os.path.join(HERE, "op_attrs.json"), "w") as f:
    json.dump(rec, f, indent=0, sort_keys=True)
print("wrote %d programs" % len(rec))
