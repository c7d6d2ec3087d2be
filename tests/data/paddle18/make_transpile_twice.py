"""Records Fleet's minimize called twice on one program by real PaddlePaddle 1.8.5 (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_transpile_twice.py

Writes transpile_twice.json beside this script: transpile_twice_case.run() for a server and a worker (one
process each: fleet is a process-wide singleton).
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.path.insert(0, HERE)
        import paddle.fluid as fluid
        import transpile_twice_case
        print("JSON " + json.dumps(transpile_twice_case.run(fluid, sys.argv[1])))
        sys.exit(0)
    rec = {}
    for role in ("server", "worker"):
        out = subprocess.run([sys.executable, __file__, role], stdout=subprocess.PIPE, check=True).stdout.decode()
        rec[role] = json.loads([l for l in out.splitlines() if l.startswith("JSON ")][-1][5:])
    with open(os.path.join(HERE, "transpile_twice.json"), "w") as f:
        json.dump(rec, f, indent=0)
    print("wrote", sorted(rec))
