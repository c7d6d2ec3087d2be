"""Records SelectedRows ops and Adam forms (rows_op_cases.py) by real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_rows_ops.py

Writes rows_ops.json beside this script (rows_op_cases.run()), which tests/unit/test_rows_ops_paddle18.py
compares with ours.
"""

import json
import os
import sys

import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rows_op_cases  # noqa: E402

rec = rows_op_cases.run(fluid)
with open(os.path.join(HERE, "rows_ops.json"), "w") as f:
    json.dump(rec, f, indent=1, sort_keys=True)
print("wrote %d cases" % len(rec))
