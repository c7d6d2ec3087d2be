"""The 2-pserver x 2-trainer async CTR-DNN job of examples/ctr_dnn, ours vs real PaddlePaddle 1.8.5 running
the same script on the same files, alternating, one OMP thread per process.

    python benchmarks/ctr_dnn_job.py [--rounds 3] [--paddle_python /work/p18/bin/python]

Job samples/s = samples trained by all trainers / the slowest trainer's train_from_dataset time (reading,
parsing and the pserver exchange included; start-up and evaluation excluded). Both jobs run on the same
cores, so the ratio is also the per-core ratio. Without a Paddle 1.8.5 Python only ours is measured.
"""

import argparse
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "ctr_dnn"))
import run_jobs  # noqa: E402


def job_rate(run):
    res = run["results"]
    samples = sum(r["samples_per_epoch"] * len(r["epochs"]) for r in res)
    return samples / max(sum(e["train_seconds"] for e in r["epochs"]) for r in res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--thread", type=int, default=2)
    ap.add_argument("--paddle_python", default="/work/p18/bin/python")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ctr_dnn_job_")
    data = os.path.join(work, "data")
    run_jobs.make_data(sys.executable, data)
    pythons = [("ours", sys.executable, "paddle_compat.distributed.launch_ps")]
    if args.paddle_python and os.path.exists(args.paddle_python):
        pythons.append(("paddle1.8.5", args.paddle_python, "paddle.distributed.launch_ps"))
    rates = {name: [] for name, _, _ in pythons}
    train_args = ["--epochs", str(args.epochs), "--thread", str(args.thread)]
    for r in range(args.rounds):
        for name, python, launcher in pythons:
            run = run_jobs.run_job(python, launcher, data, os.path.join(work, "log_%s_%d" % (name, r)),
                                   train_args)
            rates[name].append(job_rate(run))
            aucs = [x["epochs"][-1]["test_auc"] for x in run["results"] if x["epochs"][-1]["test_auc"]]
            print("round %d %-12s %8.0f samples/s  test auc %.4f" % (r, name, rates[name][-1], aucs[0]),
                  flush=True)
    med = {k: statistics.median(v) for k, v in rates.items()}
    for k, v in med.items():
        print("median %-12s %8.0f samples/s" % (k, v))
    if len(med) == 2:
        ratios = [a / b for a, b in zip(rates["ours"], rates["paddle1.8.5"])]
        print("ratio ours / paddle1.8.5: median %.2f (rounds: %s)"
              % (statistics.median(ratios), ", ".join("%.2f" % x for x in ratios)))


if __name__ == "__main__":
    main()
