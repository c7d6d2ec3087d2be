"""The 2-pserver x 2-trainer async CTR-DNN job of examples/ctr_dnn, ours vs real PaddlePaddle 1.8.5 running
the same script on the same files, alternating, one OMP thread per process.

    python benchmarks/ctr_dnn_job.py [--rounds 3] [--paddle_python /work/p18/bin/python]
    python benchmarks/ctr_dnn_job.py --modes async,half_async --paddle_python ''   # ours, the two strategies

Job samples/s = samples trained by all trainers / the slowest trainer's train_from_dataset time (reading,
parsing and the pserver exchange included; start-up and evaluation excluded). Both jobs run on the same
cores, so the ratio is also the per-core ratio. Without a Paddle 1.8.5 Python only ours is measured.
--modes picks the Fleet strategies (train.py --mode); half_async runs with
FLAGS_communicator_max_merge_var_num = FLAGS_communicator_send_queue_size = --thread, one merged send per
round of the trainer's threads (Paddle 1.8 forces both to CPU_NUM, its thread count).
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
    ap.add_argument("--modes", default="async", help="comma-separated train.py --mode values")
    ap.add_argument("--small", action="store_true", help="the tests' data size")
    args = ap.parse_args()
    os.environ.setdefault("FLAGS_communicator_max_merge_var_num", str(args.thread))
    os.environ.setdefault("FLAGS_communicator_send_queue_size", str(args.thread))
    work = tempfile.mkdtemp(prefix="ctr_dnn_job_")
    data = os.path.join(work, "data")
    run_jobs.make_data(sys.executable, data, run_jobs.SMALL if args.small else ())
    modes = args.modes.split(",")
    pythons = []
    for mode in modes:
        tag = "" if modes == ["async"] else " " + mode
        pythons.append(("ours" + tag, sys.executable, "paddle_compat.distributed.launch_ps", mode))
        if args.paddle_python and os.path.exists(args.paddle_python):
            pythons.append(("paddle1.8.5" + tag, args.paddle_python, "paddle.distributed.launch_ps", mode))
    rates = {name: [] for name, _, _, _ in pythons}
    train_args = ["--epochs", str(args.epochs), "--thread", str(args.thread)]
    for r in range(args.rounds):
        for name, python, launcher, mode in pythons:
            log = os.path.join(work, "log_%s_%d" % (name.replace(" ", "_"), r))
            run = run_jobs.run_job(python, launcher, data, log, train_args + ["--mode", mode])
            rates[name].append(job_rate(run))
            aucs = [x["epochs"][-1]["test_auc"] for x in run["results"] if x["epochs"][-1]["test_auc"]]
            print("round %d %-24s %8.0f samples/s  test auc %.4f" % (r, name, rates[name][-1], aucs[0]),
                  flush=True)
    med = {k: statistics.median(v) for k, v in rates.items()}
    for k, v in med.items():
        print("median %-24s %8.0f samples/s" % (k, v))
    if set(med) == {"ours", "paddle1.8.5"}:
        ratios = [a / b for a, b in zip(rates["ours"], rates["paddle1.8.5"])]
        print("ratio ours / paddle1.8.5: median %.2f (rounds: %s)"
              % (statistics.median(ratios), ", ".join("%.2f" % x for x in ratios)))


if __name__ == "__main__":
    main()
