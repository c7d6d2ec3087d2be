"""Records what real PaddlePaddle 1.8.5 reaches with examples/word2vec (run outside CI, from a directory
outside any checkout, so that `import paddle` is the real one):

    cd /tmp && OMP_NUM_THREADS=1 /path/to/paddle18/bin/python /path/to/repo/tests/data/paddle18/make_word2vec.py

Makes the example's default corpus, then trains locally and as a 2-pserver x 2-trainer async job under
`python -m paddle.distributed.launch_ps`; records each run's command, RESULT lines (topic accuracy of the
trained embedding, train seconds) and wall time. Writes word2vec.json beside this script.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "..", "examples")
sys.path.insert(0, os.path.join(EXAMPLES, "ctr_dnn"))
import run_jobs  # noqa: E402

SCRIPT = os.path.abspath(os.path.join(EXAMPLES, "word2vec", "train.py"))


def main():
    import paddle
    out = {"paddle_version": paddle.__version__, "made_by": "tests/data/paddle18/make_word2vec.py"}
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "data")
        info = subprocess.run([sys.executable, os.path.join(EXAMPLES, "word2vec", "make_data.py"), "--out_dir",
                               data], check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
        out["data_info"] = json.loads(info.strip().splitlines()[-1])
        out["local"] = run_jobs.run_local(sys.executable, data, script=SCRIPT)
        out["job_2x2_async"] = run_jobs.run_job(sys.executable, "paddle.distributed.launch_ps", data,
                                                os.path.join(work, "log"), script=SCRIPT)
    for run in (out["local"], out["job_2x2_async"]):
        run["command"] = " ".join(os.path.basename(c) if c.endswith(".py") or c == sys.executable else c
                                  for c in run["command"])
    with open(os.path.join(HERE, "word2vec.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
