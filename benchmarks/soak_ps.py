"""Soak: a long async CTR job (2 pservers + 2 trainers on 127.0.0.1, the embedding table distributed on the
pservers) with every process's resident memory, open file descriptors and thread count sampled from /proc.

    python benchmarks/soak_ps.py                  20000 steps per trainer (the README's figures)
    python benchmarks/soak_ps.py --steps 2000     a quick look

A leak shows as growth after warm-up: the script compares each process's figures at the end of the warm-up
(both trainers past a tenth of their steps, and at least --warmup-frac of the run) with its last sample taken
while both trainers still train, and fails (exit 1) if RSS grew more than 5% or descriptors or
threads grew at all. It is a benchmark, not a test: it takes minutes.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from bench_util import free_ports  # noqa: E402


def sample(pid):
    """(rss MiB, open fds, threads) of a live process, or None once it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        fds = len(os.listdir("/proc/%d/fd" % pid))
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(status["VmRSS"].split()[0]) / 1024.0, fds, int(status["Threads"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000, help="steps per trainer")
    ap.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    ap.add_argument("--warmup-frac", type=float, default=0.2)
    ap.add_argument("--table-height", type=int, default=100001)
    ap.add_argument("--timeout", type=int, default=3600)
    args = ap.parse_args()

    eps = ["127.0.0.1:%d" % p for p in free_ports(2)]
    cmd = [sys.executable, os.path.join(REPO, "examples", "ctr_dist.py"), "--async", "--steps", str(args.steps),
           "--table-height", str(args.table_height), "--hidden", "64,32", "--pool", "65536",
           "--log-every", str(max(1, args.steps // 10)), "--timeout", str(args.timeout)]
    common = dict(os.environ, PADDLE_PSERVERS_IP_PORT_LIST=",".join(eps), PADDLE_TRAINERS_NUM="2",
                  OMP_NUM_THREADS="1", PYTHONPATH=REPO, TORCH_CPP_LOG_LEVEL="ERROR", FLAGS_rpc_deadline="120000")
    roles = [("pserver%d" % i, dict(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep)) for i, ep in enumerate(eps)]
    roles += [("trainer%d" % i, dict(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=str(i))) for i in range(2)]
    logs, procs = {}, {}
    t0 = time.monotonic()
    try:
        for name, env in roles:
            logs[name] = open(os.path.join("/tmp", "soak_%d_%s.log" % (os.getpid(), name)), "w+")
            procs[name] = subprocess.Popen(cmd, env=dict(common, **env), stdout=logs[name], stderr=subprocess.STDOUT,
                                           cwd=REPO, start_new_session=True)
        series = {name: [] for name in procs}
        training, warm_t = True, None
        while time.monotonic() - t0 < args.timeout:
            alive = any(p.poll() is None for p in procs.values())
            # sample only while both trainers train: shutdown releases sockets and threads
            texts = [open(logs[n].name).read() for n in ("trainer0", "trainer1")]
            training = training and not any("RESULT" in t for t in texts)
            if warm_t is None and all(t.count(" loss ") >= 2 for t in texts):
                warm_t = time.monotonic() - t0          # both trainers past their first tenth of the steps
            for name, p in procs.items():
                s = sample(p.pid) if training and p.poll() is None else None
                if s is not None:
                    series[name].append((time.monotonic() - t0,) + s)
            bad = [n for n, p in procs.items() if p.poll() not in (None, 0)]
            if bad or not alive:
                break
            time.sleep(args.every)
        failed = [(n, p.poll()) for n, p in procs.items() if p.poll() != 0]
    finally:
        for p in procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
    took = time.monotonic() - t0
    for f in logs.values():
        f.seek(0)
    tail = {n: f.read().splitlines() for n, f in logs.items()}
    if failed:
        for n, lines in tail.items():
            print("[%s] %s" % (n, "\n[%s] ".join(lines[-15:]) % ((n,) * (len(lines[-15:]) - 1)) if lines else ""))
        print("FAILED: %s" % failed)
        return 1
    print("async CTR-DNN, 26 slots, table %d x 10 on 2 pservers, 2 trainers x %d steps, %.0fs"
          % (args.table_height, args.steps, took))
    for n in ("trainer0", "trainer1"):
        res = [line for line in tail[n] if "loss" in line]
        print("  %s: %s | %s" % (n, res[0].strip() if res else "", res[-1].strip() if res else ""))
    print("%-9s %8s %8s %7s %5s %5s %7s %7s" % ("process", "RSS@wu", "RSS end", "growth", "fd@wu", "fd", "thr@wu",
                                                 "thr"))
    ok = True
    for name, s in series.items():
        end = s[-1][0]
        s = [x for x in s if x[0] >= max(warm_t or 0.0, args.warmup_frac * end)] or s
        first, last = s[0], s[-1]
        growth = (last[1] - first[1]) / first[1] * 100.0
        print("%-9s %7.1fM %7.1fM %6.1f%% %5d %5d %7d %7d" % (name, first[1], last[1], growth, first[2], last[2],
                                                              first[3], last[3]))
        ok &= growth < 5.0 and last[2] <= first[2] and last[3] <= first[3]
    print("FLAT" if ok else "GROWTH after warm-up (see above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
