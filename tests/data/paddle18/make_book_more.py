"""Records the first 10 losses of the word2vec (N-gram; softmax head dense and is_sparse, hsigmoid and nce
heads), recommender_system and recognize_digits (convolutional) book models (tests/book_more.py, run here with
Paddle 1.8.5) from real
PaddlePaddle 1.8.5 (run outside CI, from a directory outside the checkout):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_book_more.py
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # tests/ (book_more)

import paddle.fluid as fluid  # noqa: E402

import book_more  # noqa: E402

res = {name: book_more.train(fluid, name) for name in book_more.MODELS}
with open(os.path.join(HERE, "book_more.json"), "w") as f:
    json.dump(res, f)
for name in book_more.MODELS:
    print(name, res[name]["losses"])
