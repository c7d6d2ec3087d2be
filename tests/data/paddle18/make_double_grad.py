"""Records Paddle 1.8.5's gradients of gradients (double_grad_cases.py) from real PaddlePaddle 1.8.5 (run
outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_double_grad.py

Writes double_grad.json: {case: {label: [fetched value per step]}}."""

import json
import os
import sys

import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import double_grad_cases as C  # noqa: E402


def main():
    out = {name: C.run(fluid, name) for name in C.CASES}
    with open(os.path.join(HERE, "double_grad.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
