"""Records every field of Fleet's StrategyFactory strategies from real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_strategies.py

Writes strategies.json beside this script: strategy_cases.dump() (each strategy as created and after each
set_* call, with CPU_NUM=2), which tests/unit/test_strategies_paddle18.py compares with ours field by field.
"""

import json
import os
import sys

import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import strategy_cases  # noqa: E402

cases = strategy_cases.dump(fluid)
with open(os.path.join(HERE, "strategies.json"), "w") as f:
    json.dump(cases, f, indent=1, sort_keys=True)
print("wrote %d cases" % len(cases))
