"""Records, with real Paddle 1.8.5, the LoD each fetched gradient of grad_lod_cases.py carries.

Run: GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /work/p18/bin/python make_grad_lod.py  (writes grad_lod.json)
"""

import json
import os
import sys

import paddle.fluid as fluid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grad_lod_cases import CASES, harness_cases, run_case, run_harness_case  # noqa: E402

out = {}
for name in list(CASES) + [n + "@chained" for n in CASES]:
    try:
        out[name] = run_case(fluid, name.split("@")[0], name.endswith("@chained"))
    except Exception as e:   # a case Paddle cannot run is left out, and said so
        print("skip %s: %s" % (name, str(e).splitlines()[0] if str(e) else type(e).__name__))
        continue
    print(name, out[name])
for name, case in sorted(harness_cases().items()):
    try:
        out["harness:" + name] = run_harness_case(fluid, case)
    except Exception as e:
        print("skip %s: %s" % (name, str(e).splitlines()[0] if str(e) else type(e).__name__))
        continue
    print(name, out["harness:" + name])
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "grad_lod.json"), "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
