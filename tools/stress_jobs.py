#!/usr/bin/env python3
"""Stress (not in CI): many untouched 2-pserver x 2-trainer jobs in a row, each with its own job key, and
the count of those that fail; optionally while a probe loop hits every listener of every job.

    python tools/stress_jobs.py --jobs 100 --parallel 2 --seconds 30               untouched jobs
    python tools/stress_jobs.py --jobs 100 --parallel 2 --seconds 30 --probe       under probes

A job is the 784-200-200-10 MLP in sync mode, each trainer training on its own batches for --seconds, then
closing (the pservers end when both have closed). It fails if any of its processes exits non-zero, a loss is
not finite, it runs past --timeout, or (--probe) a probe's pickle ran. The probes (tests/prober.py):
connect-and-close, garbage, half-open, slow, a crowd of 100, a pickle, at every port each process listens on
and at the configured endpoints before they listen. Logs of failed jobs are kept under --keep.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))

from paddle_compat.distributed.procs import free_ports  # noqa: E402


def node():
    """One process of a job (role from the environment)."""
    import numpy as np
    import torch
    torch.set_num_threads(1)
    import paddle_compat as fluid
    role = os.environ["TRAINING_ROLE"]
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"]
    tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    seconds = float(os.environ["STRESS_SECONDS"])
    img = fluid.layers.data(name="img", shape=[784], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    h = fluid.layers.fc(img, 200, act="relu")
    h = fluid.layers.fc(h, 200, act="relu")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(fluid.layers.fc(h, 10, act="softmax"), label))
    fluid.optimizer.SGD(0.05).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(tid, pservers=eps, trainers=2)
    exe = fluid.Executor(fluid.CPUPlace())
    if role == "PSERVER":
        ep = os.environ["PADDLE_CURRENT_ENDPOINT"]
        prog = t.get_pserver_program(ep)
        exe.run(t.get_startup_program(ep, prog))
        exe.run(prog)
        return
    prog = t.get_trainer_program()
    exe.run(fluid.default_startup_program())
    rng = np.random.RandomState(tid)
    x = rng.uniform(0, 1, (64 * 32, 784)).astype(np.float32)
    y = np.argmax(x[:, :10], axis=1).astype(np.int64).reshape(-1, 1)
    losses, t0, step = [], time.monotonic(), 0
    while time.monotonic() - t0 < seconds:
        k = (step % 64) * 32
        out, = exe.run(prog, feed={"img": x[k:k + 32], "label": y[k:k + 32]}, fetch_list=[loss])
        losses.append(float(np.asarray(out).reshape(-1)[0]))
        step += 1
        time.sleep(0.01)
    exe.close()
    print("RESULT " + json.dumps({"steps": step, "finite": bool(np.isfinite(losses).all()),
                                  "first": losses[0], "last": losses[-1]}), flush=True)


def run_job(i, args, workdir):
    """(ok, why, seconds, probe counts)."""
    from paddle_compat.backends.job_env import JobKeyFile
    d = os.path.join(workdir, "job%03d" % i)
    os.makedirs(d)
    eps = ["127.0.0.1:%d" % p for p in free_ports(2)]
    marker = os.path.join(d, "pwned")
    base = dict(os.environ, PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM="2", OMP_NUM_THREADS="1",
                PYTHONPATH=REPO, PYTHONUNBUFFERED="1", FLAGS_rpc_deadline=str(args.deadline_ms),
                STRESS_SECONDS=str(args.seconds))
    roles = [("ps%d" % k, dict(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep)) for k, ep in enumerate(eps)]
    roles += [("tr%d" % k, dict(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=str(k))) for k in range(2)]
    procs, loop = {}, None
    with JobKeyFile() as key:
        env = key.env(base)
        if args.probe:
            from prober import ProbeLoop
            loop = ProbeLoop(lambda: [p.pid for p in list(procs.values())], extra=eps, period=args.probe_period,
                             marker=marker)
            loop.start()
        t0 = time.monotonic()
        try:
            for name, extra in roles:
                with open(os.path.join(d, name + ".log"), "wb") as log:
                    procs[name] = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--node"],
                                                   env=dict(env, **extra), stdout=log, stderr=subprocess.STDOUT,
                                                   start_new_session=True)
            why = None
            for name, p in procs.items():
                try:
                    rc = p.wait(timeout=max(1.0, t0 + args.timeout - time.monotonic()))
                except subprocess.TimeoutExpired:
                    why = why or "%s still running after %ds" % (name, args.timeout)
                    continue
                if rc != 0 and why is None:
                    why = "%s exited %s" % (name, rc)
        finally:
            for p in procs.values():
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    p.wait()
            took = time.monotonic() - t0
            counts = loop.stop() if loop is not None else {}
    for k in range(2):
        text = open(os.path.join(d, "tr%d.log" % k)).read()
        res = [json.loads(line[7:]) for line in text.splitlines() if line.startswith("RESULT ")]
        if why is None and (not res or not res[0]["finite"]):
            why = "trainer %d: %s" % (k, "no result" if not res else "non-finite loss")
    if why is None and os.path.exists(marker):
        why = "a probe's pickle ran"
    if why is None:
        shutil.rmtree(d)
    elif args.keep:
        os.makedirs(args.keep, exist_ok=True)
        shutil.copytree(d, os.path.join(args.keep, os.path.basename(d) + "-%d" % os.getpid()))
    return why is None, why, took, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--node", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=30.0, help="each trainer trains this long")
    ap.add_argument("--timeout", type=int, default=300, help="a job running longer fails")
    ap.add_argument("--deadline-ms", type=int, default=60000, help="FLAGS_rpc_deadline of the jobs")
    ap.add_argument("--probe", action="store_true", help="a probe loop hits every listener of every job")
    ap.add_argument("--probe-period", type=float, default=0.5)
    ap.add_argument("--keep", default=None, help="copy the logs of failed jobs here")
    args = ap.parse_args()
    if args.node:
        node()
        return 0
    workdir = tempfile.mkdtemp(prefix="stress_jobs_")
    results, lock, nxt = [], threading.Lock(), [0]

    def worker():
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= args.jobs:
                return
            ok, why, took, counts = run_job(i, args, workdir)
            with lock:
                results.append((i, ok, why, took, counts))
                print("job %3d %s %.1fs%s%s" % (i, "ok  " if ok else "FAIL", took, "" if ok else " " + why,
                                                 (" probes %s" % counts) if counts else ""), flush=True)

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(args.parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    shutil.rmtree(workdir, ignore_errors=True)
    failed = [r for r in results if not r[1]]
    took = [r[3] for r in results]
    probes = {}
    for r in results:
        for k, v in r[4].items():
            probes[k] = probes.get(k, 0) + v
    print("%d jobs (%s, %d at a time, trainers train %.0fs each), %d failed; job seconds min %.1f median %.1f max "
          "%.1f; %.0f s in all%s" % (len(results), "under probes" if args.probe else "untouched", args.parallel,
                                     args.seconds, len(failed), min(took), statistics.median(took), max(took),
                                     time.monotonic() - t0, ("; probes made: %s" % probes) if probes else ""))
    for i, _, why, _, _ in failed:
        print("  job %d: %s" % (i, why))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
