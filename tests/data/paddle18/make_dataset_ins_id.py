"""Records what Paddle 1.8.5's InMemoryDataset feeds with ins ids / content parsed, with a download
command, after slots_shuffle, and what core.Dataset's getters say (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_dataset_ins_id.py

Writes dataset_ins_id.json beside this script (the cases live in dataset_ins_id_cases.py).
"""

import json
import os
import shutil
import sys
import tempfile

import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dataset_ins_id_cases import CASES  # noqa: E402

out = {}
for case in CASES:
    tmp = tempfile.mkdtemp()
    try:
        out[case.__name__] = case(fluid, tmp)
    finally:
        shutil.rmtree(tmp)
with open(os.path.join(HERE, "dataset_ins_id.json"), "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
print("wrote dataset_ins_id.json")
