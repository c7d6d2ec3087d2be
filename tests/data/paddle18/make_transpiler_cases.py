"""Records real PaddlePaddle 1.8.5's pserver-mode programs for the cases of tests/transpiler_cases.py (2
pservers, 2 trainers): op types per block of the trainer and pserver programs, the startup programs' ops
with their outputs, listen_and_serv's block attributes and the _parameters_on_pservers record. Run outside
CI, from a directory outside the checkout so that the real paddle is imported:

    cd /tmp && GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python \
        <repo>/tests/data/paddle18/make_transpiler_cases.py

Writes transpiler_cases.json: {case: record} (transpiler_cases.record)."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

import transpiler_cases  # noqa: E402


def main():
    import paddle.fluid as fluid
    res = {case: transpiler_cases.record(fluid, case) for case in sorted(transpiler_cases.CASES)}
    for case, r in res.items():
        for k, v in r.items():
            print(case, k, v)
    with open(os.path.join(HERE, "transpiler_cases.json"), "w") as f:
        json.dump(res, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main()
