"""Records what real PaddlePaddle 1.8.5 reaches with examples/ctr_dnn (run outside CI, from a directory
outside any checkout, so that `import paddle` is the real one):

    cd /tmp && OMP_NUM_THREADS=1 /path/to/paddle18/bin/python /path/to/repo/tests/data/paddle18/make_ctr_dnn.py

For the tests' small data and the example's default data: the data's known AUCs (make_data.py's
data_info.json), then train.py locally and as a 2-pserver x 2-trainer async job under
`python -m paddle.distributed.launch_ps`, each with its command, RESULT lines (per-epoch train AUC, test
loss, test AUC, samples/s) and wall time. Writes ctr_dnn.json beside this script.
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples", "ctr_dnn"))
import run_jobs  # noqa: E402


def record(work, data_args):
    data = os.path.join(work, "data")
    info = run_jobs.make_data(sys.executable, data, data_args)
    local = run_jobs.run_local(sys.executable, data)
    job = run_jobs.run_job(sys.executable, "paddle.distributed.launch_ps", data, os.path.join(work, "log"))
    for run in (local, job):
        run["command"] = " ".join(os.path.basename(c) if c.endswith(".py") or c == sys.executable else c
                                  for c in run["command"])
    return {"make_data_args": list(data_args), "data_info": info, "local": local, "job_2x2_async": job}


def main():
    import paddle
    out = {"paddle_version": paddle.__version__, "made_by": "tests/data/paddle18/make_ctr_dnn.py"}
    with tempfile.TemporaryDirectory() as work:
        out["small"] = record(os.path.join(work, "small"), run_jobs.SMALL)
        out["default"] = record(os.path.join(work, "default"), [])
    with open(os.path.join(HERE, "ctr_dnn.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
