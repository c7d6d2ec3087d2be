"""Records fluid.average.WeightedAverage from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_average.py

Writes average.json beside this script: for each case (CASES below: (value, weight) pairs, numbers or arrays)
the eval() after each add, or the error's type and message. tests/unit/test_average_paddle18.py runs the same
cases here (run() takes the fluid module).
"""

import json
import os
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = {
    "numbers": [(0.5, 2), (1.0, 3), (0.25, 1.5)],
    "arrays": [(np.array([0.5, 1.0]), 2), (np.array([1.0, 0.0]), np.array([4.0]))],
    "array_weight_of_one": [(np.array([0.75], "float32"), np.array([32], "int64")), (0.25, 32)],
    "bad_value": [("0.5", 1)],
    "bad_weight": [(0.5, [1])],
    "empty": [],
}


def run(fluid, case):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        avg = fluid.average.WeightedAverage()
    try:
        for value, weight in CASES[case]:
            avg.add(value, weight)
            out.append(np.asarray(avg.eval()).tolist())
        if not CASES[case]:
            avg.eval()
    except ValueError as e:
        out.append(["ValueError", str(e)])
    return out


def main():
    import paddle.fluid as fluid
    out = {case: run(fluid, case) for case in CASES}
    with open(os.path.join(HERE, "average.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    print(out)


if __name__ == "__main__":
    main()
