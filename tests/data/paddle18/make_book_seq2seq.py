"""Records the first 10 training losses of the rnn_encoder_decoder and machine_translation (training part)
book models (tests/book_seq2seq.py, shared with the unit test) from real PaddlePaddle 1.8.5 (run outside CI,
from a directory outside the checkout so that the real paddle is imported):

    cd /tmp && GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python \
        <repo>/tests/data/paddle18/make_book_seq2seq.py

Writes book_seq2seq.json: the synthetic batches, the parameters (name, shape; initial values come from
book_seq2seq.init_values in creation order) and each model's losses over 10 Adagrad steps.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

import book_seq2seq as B  # noqa: E402


def main():
    import paddle.fluid as fluid
    data = B.batches(10)
    res = {"batches": data}
    for name in B.MODELS:
        res[name] = B.train(fluid, name, data)
        print(name, res[name]["losses"])
    with open(os.path.join(HERE, "book_seq2seq.json"), "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
