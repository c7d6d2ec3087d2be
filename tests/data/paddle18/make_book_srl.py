"""Records the first 10 losses (and the last decoded path) of the label_semantic_roles book model
(tests/book_srl.py, run here with Paddle 1.8.5) from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_book_srl.py
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # tests/ (book_srl)

import paddle.fluid as fluid  # noqa: E402

import book_srl  # noqa: E402

res = book_srl.train(fluid)
with open(os.path.join(HERE, "book_srl.json"), "w") as f:
    json.dump(res, f)
print(res["losses"])
