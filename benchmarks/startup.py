"""Start-up of a parameter-server job: 2 pservers x 2 trainers, sync, the MLP 784-200-200-10, ONE step, all four
processes launched at once on 127.0.0.1; from launch to every process's exit, with where the time goes.

    python benchmarks/startup.py [--runs 7] [--paddle-python /work/p18/bin/python] [--head-start 0]

Each process stamps wall-clock times (relative to the launch) after: the interpreter is up (first line of the
script), `import torch` (Paddle 1.8.5: `import paddle.fluid`), `import paddle_compat`, building the program and
transpiling it, running the startup program, the first step (trainers; split into connecting + handshakes to
the pservers, lowering, and the rest) or serving (pservers: exe.run(pserver program) returns once every
trainer is done), Executor.close(); the launcher adds the process's exit. Reported: medians over --runs of
each phase for trainer 0 and pserver 0, and of the job's wall time (launch to the last exit). Paddle 1.8.5's
pservers may not exit: its job ends at its trainers' exit, its pservers are killed by pid then (said so).
--head-start S starts the trainers S seconds after the pservers (how Paddle's own tests launch).
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time

from bench_util import free_ports  # benchmarks/ is the script's directory

T_UP = time.time()
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _stamp(marks, name, inside=None):
    marks.append((name, time.time() - float(os.environ["BENCH_T0"]), dict(inside or {})))


def _timed(owner, attr, key, inside, stack):
    """Wrap owner.attr so that its time adds to inside[key], less the time of timed calls nested in it."""
    fn = getattr(owner, attr)

    def wrapper(*a, **k):
        t0 = time.time()
        stack.append(0.0)
        try:
            return fn(*a, **k)
        finally:
            took = time.time() - t0
            inside[key] = inside.get(key, 0.0) + took - stack.pop()
            if stack:
                stack[-1] += took
    setattr(owner, attr, wrapper)


def worker(impl):
    marks = [("python", T_UP - float(os.environ["BENCH_T0"]), {})]
    import atexit
    # registered first, so it runs last of the atexit handlers: what follows it is the interpreter's teardown
    atexit.register(lambda: print("ATEXIT %r" % (time.time() - float(os.environ["BENCH_T0"])), flush=True))
    inside, stack = {}, []
    if impl == "ours":
        import torch
        torch.set_num_threads(1)
        _stamp(marks, "import torch")
        import paddle_compat as fluid
        _stamp(marks, inside=inside, name="import paddle_compat")
        from paddle_compat.backends.lowering import codegen
        from paddle_compat.backends.ps import client
        _timed(codegen, "lower_block", "lowering", inside, stack)
        _timed(client.TrainerClient, "_join", "connect", inside, stack)
    else:
        import paddle.fluid as fluid
        _stamp(marks, inside=inside, name="import paddle.fluid")
    role = os.environ["TRAINING_ROLE"]
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"]
    tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    img = fluid.layers.data(name="img", shape=[784], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    h = img
    for i, size in enumerate([200, 200, 10]):
        h = fluid.layers.fc(h, size=size, act="softmax" if i == 2 else "relu")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
    fluid.optimizer.SGD(learning_rate=0.1).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(tid, pservers=eps, trainers=2)
    exe = fluid.Executor(fluid.CPUPlace())
    if role == "PSERVER":
        ep = os.environ["PADDLE_CURRENT_ENDPOINT"]
        prog, start = t.get_pserver_programs(ep)
        _stamp(marks, inside=inside, name="build + transpile")
        exe.run(start)
        _stamp(marks, inside=inside, name="startup program")
        exe.run(prog)
        _stamp(marks, inside=inside, name="serve (until trainers are done)")
    else:
        prog = t.get_trainer_program()
        _stamp(marks, inside=inside, name="build + transpile")
        exe.run(fluid.default_startup_program())
        _stamp(marks, inside=inside, name="startup program")
        import numpy as np
        rng = np.random.RandomState(tid)
        x = rng.uniform(0, 1, (64, 784)).astype(np.float32)
        y = rng.randint(0, 10, (64, 1)).astype(np.int64)
        exe.run(prog, feed={"img": x, "label": y}, fetch_list=[loss])
        _stamp(marks, inside=inside, name="first step")
        exe.close()
        _stamp(marks, inside=inside, name="Executor.close")
    print("STAMPS " + json.dumps({"marks": marks}), flush=True)


def run_job(impl, python, head_start, timeout=120, repo=REPO):
    eps = ",".join("127.0.0.1:%d" % p for p in free_ports(2))
    base = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", CPU_NUM="1", GLOG_v="0",
                PYTHONUNBUFFERED="1", TORCH_CPP_LOG_LEVEL="ERROR", PADDLE_PSERVERS_IP_PORT_LIST=eps,
                PADDLE_TRAINERS_NUM="2")
    # an installed package has its bytecode compiled; a checkout run with PYTHONDONTWRITEBYTECODE=1 would
    # compile every module from source in every process of every job
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    if impl != "paddle":
        base["PYTHONPATH"] = repo
    else:
        base.pop("PYTHONPATH", None)
    roles = [("pserver%d" % i, dict(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep))
             for i, ep in enumerate(eps.split(","))]
    roles += [("trainer%d" % i, dict(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=str(i))) for i in range(2)]
    argv = [python, os.path.abspath(__file__), "--worker", "paddle" if impl == "paddle" else "ours"]
    procs, exits = {}, {}
    t0 = time.time()
    base["BENCH_T0"] = repr(t0)
    try:
        for name, env in roles:
            if name == "trainer0" and head_start:
                time.sleep(head_start)
            procs[name] = subprocess.Popen(argv, env=dict(base, **env), stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, start_new_session=True)
        killed = []
        while len(exits) < len(procs) and time.time() - t0 < timeout:
            for n, p in procs.items():
                if n not in exits and p.poll() is not None:
                    exits[n] = time.time() - t0
            if impl != "ours" and all(n in exits for n in ("trainer0", "trainer1")) and len(exits) < len(procs):
                # Paddle 1.8.5's pservers may never exit: its job ends with its trainers
                t_end = max(exits.values())
                while time.time() - t0 - t_end < 2.0 and len(exits) < len(procs):
                    for n, p in procs.items():
                        if n not in exits and p.poll() is not None:
                            exits[n] = time.time() - t0
                    time.sleep(0.005)
                for n, p in procs.items():
                    if n not in exits:
                        os.killpg(p.pid, signal.SIGKILL)
                        killed.append(n)
                break
            time.sleep(0.005)
    finally:
        for p in procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    outs = {n: p.stdout.read().decode(errors="replace") for n, p in procs.items()}
    stamps = {}
    for n, o in outs.items():
        for line in o.splitlines():
            if line.startswith("STAMPS "):
                stamps[n] = json.loads(line[7:])
        for line in o.splitlines():
            if line.startswith("ATEXIT ") and n in stamps:
                stamps[n]["atexit"] = float(line[7:])
    if any(procs[n].returncode != 0 for n in procs if n not in killed) or len(stamps) < (2 if killed else 4):
        raise SystemExit("%s job failed:\n%s" % (impl, "\n".join("[%s] %s" % (n, o[-1500:]) for n, o in outs.items())))
    wall = max(v for n, v in exits.items() if n not in killed)
    return wall, stamps, exits, killed


def phases(st, exit_t):
    """[(phase, seconds)] of one process: the gaps between its stamps, each split into connecting to the
    pservers, lowering and the rest where those happened in it, and the exit after its last stamp."""
    out, prev, prev_in = [], 0.0, {}
    for name, t, inside in st["marks"]:
        d = t - prev
        parts = [(k, v - prev_in.get(k, 0.0)) for k, v in sorted(inside.items()) if v - prev_in.get(k, 0.0) > 1e-4]
        if parts:
            for k, v in parts:
                out.append(("%s: %s" % (name, k), v))
                d -= v
            name = "%s: the rest" % name
        out.append((name, d))
        prev, prev_in = t, inside
    if "atexit" in st:
        out.append(("exit: threads + atexit handlers", st["atexit"] - prev))
        prev = st["atexit"]
    if exit_t is not None:
        out.append(("exit: interpreter teardown", exit_t - prev))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", choices=["ours", "paddle"])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--paddle-python", default="/work/p18/bin/python")
    ap.add_argument("--head-start", type=float, default=0.0)
    ap.add_argument("--before", default=None, help="a checkout of another version of the package (its parent "
                    "directory, holding paddle_compat/): run as 'before' alongside, to measure a change")
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return 0
    impls = [("ours", sys.executable)]
    repos = {"ours": REPO, "before": args.before}
    if args.before:
        impls.append(("before", sys.executable))
    if args.paddle_python and os.path.exists(args.paddle_python):
        impls.append(("paddle", args.paddle_python))
    res = {impl: [] for impl, _ in impls}
    for impl, python in impls:   # one job each first, not counted: bytecode written, files in the page cache
        run_job(impl, python, args.head_start, repo=repos.get(impl, REPO))
    for r in range(args.runs):
        for impl, python in (impls if r % 2 == 0 else impls[::-1]):
            wall, stamps, exits, killed = run_job(impl, python, args.head_start, repo=repos.get(impl, REPO))
            res[impl].append((wall, stamps, exits, killed))
            print("run %d %-6s %.2f s  (exits: %s%s)  load %.2f" % (
                r, impl, wall, ", ".join("%s %.2f" % kv for kv in sorted(exits.items())),
                "; killed " + ",".join(killed) if killed else "", os.getloadavg()[0]), flush=True)
    for impl, runs in res.items():
        print("\n%s: 2 pservers x 2 trainers, sync, one step; medians of %d runs%s" % (
            {"ours": "ours", "before": "before (%s)" % args.before}.get(impl, "Paddle 1.8.5"), len(runs),
            ", trainers started %.1f s after the pservers" % args.head_start if args.head_start else ""))
        print("  launch to every process's exit: %.2f s (runs: %s)" % (
            statistics.median(w for w, _, _, _ in runs), ", ".join("%.2f" % w for w, _, _, _ in runs)))
        if any(k for _, _, _, k in runs):
            print("  (its pservers did not exit after its trainers: killed after 2 s; the figure ends at the trainers)")
        for who in ("trainer0", "pserver0"):
            per = {}
            order = []
            for _, stamps, exits, killed in runs:
                if who not in stamps:
                    continue
                for name, d in phases(stamps[who], None if who in killed else exits.get(who)):
                    if name not in per:
                        order.append(name)
                    per.setdefault(name, []).append(d)
            print("  %s:" % who)
            for name in order:
                print("    %-34s %6.3f s" % (name, statistics.median(per[name])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
