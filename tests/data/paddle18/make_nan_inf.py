"""Record what Paddle 1.8.5's FLAGS_check_nan_inf=1 reports (run outside CI):

    GLOG_v=0 OMP_NUM_THREADS=1 CPU_NUM=1 /path/to/paddle18/bin/python tests/data/paddle18/make_nan_inf.py

Each case of nan_inf_cases.py runs in a child process (Paddle reads FLAGS_check_nan_inf and the
PADDLE_INF_NAN_SKIP_* variables once per process) for up to STEPS steps; nan_inf.json records per case the
step that raised, the exception type, the op and tensor of Paddle's "===ERROR: in [op=..] [tensor=..] find
nan or inf===", the lines it printed to stdout before raising, and the fetched values of the steps that ran.
It also records the op types Paddle 1.8.5 runs without a kernel (OperatorBase): the check runs in
OperatorWithKernel::RunImpl, so their outputs are never checked."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nan_inf_cases as C  # noqa: E402

CHILD = r"""
import json, re, sys
import numpy as np
import paddle.fluid as fluid
sys.path.insert(0, %(here)r)
import nan_inf_cases as C
main, startup, feed, out = C.build(fluid, %(name)r)
exe = fluid.Executor(fluid.CPUPlace())
exe.run(startup)
rec = {"fetched": []}
for step in range(%(steps)d):
    try:
        got = exe.run(main, feed=feed, fetch_list=[out])[0]
    except Exception as e:
        msg = str(e)
        m = re.search(r"===ERROR: in \[op=(\S+)\] \[tensor=(\S+)\] find nan or inf===", msg)
        rec.update(step=step, type=type(e).__name__, op=m.group(1), tensor=m.group(2), summary=m.group(0))
        break
    rec["fetched"].append(np.asarray(got).astype("float64").ravel().tolist())
sys.stdout.flush()
print("@@" + json.dumps(rec))
"""


def run_case(name):
    env_extra, steps = C.CASES[name]
    env = dict(os.environ, FLAGS_check_nan_inf="1", GLOG_v="0", OMP_NUM_THREADS="1", CPU_NUM="1", **env_extra)
    r = subprocess.run([sys.executable, "-c", CHILD % {"here": HERE, "name": name, "steps": steps}],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=300, cwd=HERE)   # (not the repository root: its paddle/ is ours)
    lines = r.stdout.splitlines()
    rec = json.loads([l for l in lines if l.startswith("@@")][-1][2:])
    rec["printed"] = [l for l in lines if not l.startswith("@@")]
    rec["env"] = env_extra
    return rec


def no_kernel_ops():
    from paddle.fluid import core
    from paddle.fluid.proto import framework_pb2
    kernels = set(core._get_all_register_op_kernels())
    ops = sorted(framework_pb2.OpProto.FromString(p).type for p in core.get_all_op_protos())
    return [o for o in ops if o not in kernels]


if __name__ == "__main__":
    out = {"cases": {n: run_case(n) for n in sorted(C.CASES)}, "no_kernel_ops": no_kernel_ops()}
    with open(os.path.join(HERE, "nan_inf.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    for n, rec in sorted(out["cases"].items()):
        print(n, rec.get("step"), rec.get("op"), rec.get("tensor"), rec["fetched"])
