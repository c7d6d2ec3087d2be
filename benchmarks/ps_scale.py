"""Parameter-server jobs as they grow: sync and async jobs of 1, 2, 4, 8, 16 trainers x 1, 2, 4 pservers on
127.0.0.1, for the CTR-DNN (26 id slots sharing one distributed embedding table, the PaddleRec DNN tower
400-400-400, examples/ctr_model.py) and the MLP 784-200-200-10; ours and, where it runs, Paddle 1.8.5 on the
same cells (the same worker code: only `import paddle_compat as fluid` / `import paddle.fluid as fluid` differs).

    python benchmarks/ps_scale.py                         the whole grid, ours + Paddle 1.8.5 where it runs
    python benchmarks/ps_scale.py --models mlp --modes sync --trainers 2 --pservers 2 --impls ours,paddle
    python benchmarks/ps_scale.py --plot-only benchmarks/results/ps_scale.csv

Per job (a cell): every process runs one OMP/torch thread; trainers run --warmup steps, meet at a file
barrier (so that a 16-trainer job's staggered start-up does not count as parallel work), then --windows
windows of --steps steps, each stamped with wall-clock time. Reported per cell:
  samples/s      median over windows of (trainers x steps x batch) / (last trainer's end - first's start)
  trainer CPU    each trainer's CPU ms per timed step (its own os.times), median over trainers
  pserver CPU    all pservers' CPU (from /proc, all threads) between the barrier and the last trainer's end,
                 per trainer step (one push + pull): the per-step pserver time
  process CPU s  whole-life CPU seconds (user + system, from wait4's rusage; /proc for a pserver that has
                 to be killed) of the median trainer and the median pserver: start-up included
Writes a CSV (one row per cell and implementation) and a PNG: samples/s vs trainers, a line per pserver
count and implementation, one panel per (model, mode). Quote medians: --repeats launches each cell again.
Paddle 1.8.5's pservers may not exit once their trainers are done: they are killed by pid after 2 s. Paddle
1.8.5 runs the MLP cells by default: its DistributeTranspiler fails on the CTR-DNN's distributed table (an
IndexError in _replace_lookup_table_op_with_prefetch). The whole grid, ours and Paddle's 12 MLP cells, takes
~15 minutes on 2 quiet cores with the defaults.
"""

import argparse
import csv
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench_util import free_ports  # benchmarks/ is the script's directory

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SIZES = [784, 200, 200, 10]
PADDLE_PY = "/work/p18/bin/python"


# ---------------------------------------------------------------------------------------------------
# worker (runs under our Python and under Paddle 1.8.5's Python 3.7: keep it 3.7 syntax, no torch import
# unless it is ours)
def _cpu():
    t = os.times()
    return t.user + t.system


def _mlp(fluid):
    import numpy as np
    h = img = fluid.layers.data(name="img", shape=[784], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    for i, (fi, fo) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        # a seeded initializer, not NumpyArrayInitializer: Paddle 1.8.5's pserver startup assigns the whole
        # array to a split block (a 784-row value in a 392-row block), and its trainer then fails
        lim = float(np.sqrt(6.0 / (fi + fo)))
        h = fluid.layers.fc(h, size=fo, act="softmax" if i == 2 else "relu",
                            param_attr=fluid.ParamAttr(initializer=fluid.initializer.Uniform(-lim, lim, seed=1 + i)),
                            bias_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.0)))
    loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
    fluid.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return loss, [img, label]


def _mlp_batches(fluid, batch, tid, n=16):
    import numpy as np
    rng = np.random.RandomState(100 + tid)
    teacher = np.random.RandomState(0).randn(784, 10).astype(np.float32)
    out = []
    for _ in range(n):
        x = rng.uniform(0, 1, (batch, 784)).astype(np.float32)
        out.append([x, np.argmax((x - 0.5) @ teacher, axis=1).astype(np.int64).reshape(-1, 1)])
    return out


def _ctr(fluid, args):
    sys.path.insert(0, os.path.join(REPO, "examples"))
    from ctr_model import build_ctr_model
    m = build_ctr_model(fluid, 26, emb_dim=args.emb_dim, table_height=args.table_height, is_sparse=True,
                        is_distributed=True, hidden=(400, 400, 400), with_metrics=False)
    fluid.optimizer.SGD(learning_rate=0.05).minimize(m.loss)
    return m.loss, m.feed_list


def _ctr_batches(fluid, args, tid, n=16):
    sys.path.insert(0, os.path.join(REPO, "examples"))
    from ctr_data import SyntheticCTR
    d = SyntheticCTR(num_samples=n * args.batch, num_slots=26, table_height=args.table_height, seed=10 + tid)
    place = fluid.CPUPlace()
    out = []
    for lo in range(0, n * args.batch, args.batch):
        hi = lo + args.batch
        fields = [d.dense[lo:hi]]
        for s in range(26):
            off = d.offsets[s]
            fields.append(fluid.create_lod_tensor(d.ids[s][off[lo]:off[hi]].reshape(-1, 1),
                                                  [d.lengths[s][lo:hi].tolist()], place))
        fields.append(d.label[lo:hi])
        out.append(fields)
    return out


def _wait_files(d, prefix, n, deadline_s=600):
    t_end = time.time() + deadline_s
    while len([f for f in os.listdir(d) if f.startswith(prefix)]) < n:
        if time.time() > t_end:
            raise SystemExit("barrier %s: %d of %d after %ds" % (prefix, len(os.listdir(d)), n, deadline_s))
        time.sleep(0.005)


def worker(args):
    if args.worker == "ours":
        import torch
        torch.set_num_threads(1)
        import paddle_compat as fluid
    else:
        import paddle.fluid as fluid
    role = os.environ["TRAINING_ROLE"]
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"]
    trainers = int(os.environ["PADDLE_TRAINERS_NUM"])
    tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    bar = os.environ["BENCH_DIR"]
    loss, feed_vars = _mlp(fluid) if args.model == "mlp" else _ctr(fluid, args)
    config = fluid.DistributeTranspilerConfig()
    if args.mode == "async":
        # both flags, as Paddle 1.8.5 wants them: transpile(sync_mode=False) alone leaves the pservers in sync
        # mode (config.sync_mode decides their loop) and the trainers' first recv waits forever
        config.sync_mode = False
    t = fluid.DistributeTranspiler(config=config)
    t.transpile(tid, pservers=eps, trainers=trainers, sync_mode=args.mode == "sync")
    exe = fluid.Executor(fluid.CPUPlace())
    if role == "PSERVER":
        ep = os.environ["PADDLE_CURRENT_ENDPOINT"]
        prog = t.get_pserver_program(ep)
        exe.run(t.get_startup_program(ep, prog))
        exe.run(prog)
        return
    prog = t.get_trainer_program()
    exe.run(fluid.default_startup_program())
    data = _mlp_batches(fluid, args.batch, tid) if args.model == "mlp" else _ctr_batches(fluid, args, tid)
    names = [v.name for v in feed_vars]
    step = [0]

    def run(n):
        for _ in range(n):
            exe.run(prog, feed=dict(zip(names, data[step[0] % len(data)])), fetch_list=[loss])
            step[0] += 1
    run(args.warmup)
    open(os.path.join(bar, "warm.%d" % tid), "w").close()
    _wait_files(bar, "warm.", trainers)
    c0, stamps = _cpu(), [time.time()]
    for _ in range(args.windows):
        run(args.steps)
        stamps.append(time.time())
    cpu = (_cpu() - c0) / (args.windows * args.steps)
    open(os.path.join(bar, "done.%d" % tid), "w").close()
    print("RESULT " + json.dumps({"trainer": tid, "stamps": stamps, "cpu_per_step": cpu}), flush=True)
    exe.close()


# ---------------------------------------------------------------------------------------------------
# driver
def _proc_cpu(pid):
    """CPU seconds (user + system, all threads) of a live process, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_cell(impl, model, mode, trainers, pservers, args):
    """One job; returns a dict of figures, or raises SystemExit with the logs of a failed job."""
    python = sys.executable if impl == "ours" else args.paddle_python
    bar = tempfile.mkdtemp(prefix="ps_scale_")
    ports = free_ports(pservers)
    eps = ",".join("127.0.0.1:%d" % p for p in ports)
    base = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", CPU_NUM="1", GLOG_v="0",
                PYTHONUNBUFFERED="1", TORCH_CPP_LOG_LEVEL="ERROR", BENCH_DIR=bar,
                PADDLE_PSERVERS_IP_PORT_LIST=eps, PADDLE_TRAINERS_NUM=str(trainers),
                FLAGS_rpc_deadline=str(args.deadline_ms))
    # an installed package has its bytecode compiled; a checkout run with PYTHONDONTWRITEBYTECODE=1 would
    # compile every module from source in every process of every job
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    if impl == "ours":
        base["PYTHONPATH"] = REPO
    else:
        base.pop("PYTHONPATH", None)
    argv = [python, os.path.abspath(__file__), "--worker", impl, "--model", model, "--mode", mode,
            "--steps", str(args.steps), "--windows", str(args.windows), "--warmup", str(args.warmup),
            "--batch", str(args.batch), "--table-height", str(args.table_height), "--emb-dim", str(args.emb_dim)]
    logs, procs, roles = {}, {}, []
    roles += [("pserver%d" % i, dict(TRAINING_ROLE="PSERVER", PADDLE_CURRENT_ENDPOINT=ep))
              for i, ep in enumerate(eps.split(","))]
    roles += [("trainer%d" % i, dict(TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=str(i))) for i in range(trainers)]
    rusage, pcpu0, pcpu1, killed, t_tr_end = {}, None, None, [], None
    t_launch = time.time()
    try:
        for name, env in roles:
            logs[name] = open(os.path.join(bar, "log." + name), "w+")
            procs[name] = subprocess.Popen(argv, env=dict(base, **env), stdout=logs[name],
                                           stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
        ps_names = [n for n in procs if n.startswith("pserver")]
        tr_names = [n for n in procs if n.startswith("trainer")]
        deadline = time.time() + args.timeout
        last_cpu = {}
        while time.time() < deadline:
            for n, p in procs.items():
                if n in rusage:
                    continue
                c = _proc_cpu(p.pid)
                if c is not None:
                    last_cpu[n] = c
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    p.returncode = os.waitstatus_to_exitcode(status)
                    rusage[n] = ru.ru_utime + ru.ru_stime
            files = os.listdir(bar)
            if pcpu0 is None and sum(f.startswith("warm.") for f in files) == trainers:
                pcpu0 = sum(_proc_cpu(procs[n].pid) or last_cpu.get(n, 0.0) for n in ps_names)
            if pcpu1 is None and sum(f.startswith("done.") for f in files) == trainers:
                pcpu1 = sum(_proc_cpu(procs[n].pid) or last_cpu.get(n, 0.0) for n in ps_names)
            if any(procs[n].returncode not in (None, 0) for n in rusage):
                break
            if all(n in rusage for n in tr_names):
                if all(n in rusage for n in ps_names):
                    break
                # ours: pservers end once every trainer has closed; Paddle 1.8.5's may never end
                grace = args.grace_ours if impl == "ours" else 2.0
                t_tr_end = t_tr_end or time.time()
                if time.time() - t_tr_end > grace:
                    for n in ps_names:
                        if n not in rusage:
                            rusage[n] = last_cpu.get(n, 0.0)
                            killed.append(n)
                            os.killpg(procs[n].pid, signal.SIGKILL)
                            procs[n].wait()
                    break
            time.sleep(0.02)
        t_exit = time.time()
    finally:
        for p in procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    texts = {}
    for n, f in logs.items():
        f.seek(0)
        texts[n] = f.read()
        f.close()
    shutil.rmtree(bar, ignore_errors=True)
    bad = [(n, procs[n].returncode) for n in procs if n not in killed and procs[n].returncode != 0]
    results = [json.loads(line[7:]) for n in procs for line in texts[n].splitlines() if line.startswith("RESULT ")]
    if bad or len(results) != trainers:
        tail = "\n".join("[%s] %s" % (n, "\n[%s] ".join(texts[n].splitlines()[-12:]) % ((n,) * (
            len(texts[n].splitlines()[-12:]) - 1)) if texts[n].strip() else "") for n in procs)
        raise SystemExit("%s %s %s %dx%d failed %s:\n%s" % (impl, model, mode, trainers, pservers, bad, tail))
    rates = []
    for w in range(args.windows):
        t0 = min(r["stamps"][w] for r in results)
        t1 = max(r["stamps"][w + 1] for r in results)
        rates.append(trainers * args.steps * args.batch / (t1 - t0))
    steps_all = trainers * args.steps * args.windows
    ps_cpu = [rusage[n] for n in procs if n.startswith("pserver")]
    tr_cpu = [rusage[n] for n in procs if n.startswith("trainer")]
    return dict(impl=impl, model=model, mode=mode, trainers=trainers, pservers=pservers,
                samples_per_s=statistics.median(rates),
                trainer_cpu_ms_per_step=1e3 * statistics.median(r["cpu_per_step"] for r in results),
                pserver_cpu_ms_per_step=(1e3 * (pcpu1 - pcpu0) / steps_all
                                         if pcpu0 is not None and pcpu1 is not None else float("nan")),
                trainer_cpu_s=statistics.median(tr_cpu), pserver_cpu_s=statistics.median(ps_cpu),
                job_wall_s=t_exit - t_launch, pservers_killed=len(killed))


FIELDS = ["impl", "model", "mode", "trainers", "pservers", "samples_per_s", "trainer_cpu_ms_per_step",
          "pserver_cpu_ms_per_step", "trainer_cpu_s", "pserver_cpu_s", "job_wall_s", "pservers_killed", "load1"]


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib (pip install matplotlib, or .[bench]): no plot written")
        return
    panels = sorted({(r["model"], r["mode"]) for r in rows})
    cols = 2 if len(panels) > 2 else len(panels)
    nrows = -(-len(panels) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.0 * cols, 3.8 * nrows), squeeze=False)
    styles = {"ours": "-", "paddle": "--"}
    for ax, (model, mode) in zip(axes.reshape(-1), panels):
        keys = sorted({(r["impl"], int(r["pservers"])) for r in rows if (r["model"], r["mode"]) == (model, mode)})
        for impl, ps in keys:
            pts = {}
            for r in rows:
                if (r["model"], r["mode"], r["impl"], int(r["pservers"])) == (model, mode, impl, ps):
                    pts.setdefault(int(r["trainers"]), []).append(float(r["samples_per_s"]))
            xs = sorted(pts)
            ax.plot(xs, [statistics.median(pts[x]) for x in xs], styles.get(impl, ":"), marker="o",
                    color="C%d" % {1: 0, 2: 1, 4: 2}.get(ps, 3),
                    label="%s, %d pserver%s" % ("Paddle 1.8.5" if impl == "paddle" else impl, ps, "s"[:ps > 1]))
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 2, 4, 8, 16])
        ax.set_xticklabels(["1", "2", "4", "8", "16"])
        ax.set_title("%s, %s" % ("CTR-DNN 26 slots" if model == "ctr" else "MLP 784-200-200-10", mode), fontsize=9)
        ax.set_xlabel("trainers")
        ax.set_ylabel("samples/s")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle("pserver jobs on 127.0.0.1, 2 cores (one thread per process)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    print("wrote %s" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", choices=["ours", "paddle"])
    ap.add_argument("--model", choices=["mlp", "ctr"], help="(worker)")
    ap.add_argument("--mode", choices=["sync", "async"], help="(worker)")
    ap.add_argument("--models", default="mlp,ctr")
    ap.add_argument("--modes", default="sync,async")
    ap.add_argument("--trainers", default="1,2,4,8,16")
    ap.add_argument("--pservers", default="1,2,4")
    ap.add_argument("--impls", default="ours,paddle", help="ours and/or paddle (Paddle 1.8.5)")
    # the CTR-DNN does not transpile on Paddle 1.8.5 (DistributeTranspiler with is_distributed=True tables fed
    # by 26 LoD slots: IndexError in _replace_lookup_table_op_with_prefetch, all_in_ids_vars is empty)
    ap.add_argument("--paddle-cells", default="mlp:1,2,4:1,2",
                    help="the cells Paddle 1.8.5 runs: model:trainers:pservers;... ('all': the whole grid)")
    ap.add_argument("--paddle-python", default=PADDLE_PY)
    ap.add_argument("--steps", type=int, default=20, help="steps per window per trainer")
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--table-height", type=int, default=1000001)
    ap.add_argument("--emb-dim", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per job")
    ap.add_argument("--deadline-ms", type=int, default=120000)
    ap.add_argument("--grace-ours", type=float, default=30.0)
    ap.add_argument("--csv", default=os.path.join(HERE, "results", "ps_scale.csv"))
    ap.add_argument("--png", default=None, help="default: the CSV's name with .png")
    ap.add_argument("--plot-only", default=None, help="a CSV to plot")
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return 0
    if args.plot_only:
        with open(args.plot_only) as f:
            plot(list(csv.DictReader(f)), args.png or os.path.splitext(args.plot_only)[0] + ".png")
        return 0
    paddle_cells = set()
    if args.paddle_cells == "all":
        paddle_cells = None
    else:
        for spec in filter(None, args.paddle_cells.split(";")):
            m, ts, ps = spec.split(":")
            paddle_cells |= {(m, int(t), int(p)) for t in ts.split(",") for p in ps.split(",")}
    impls = [i for i in args.impls.split(",") if i == "ours" or os.path.exists(args.paddle_python)]
    cells = [(model, mode, int(t), int(p)) for model in args.models.split(",") for mode in args.modes.split(",")
             for p in args.pservers.split(",") for t in args.trainers.split(",")]
    os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
    rows = []
    print("%-6s %-4s %-5s %3s %3s %10s %9s %9s %8s %8s %7s %5s" % (
        "impl", "mod", "mode", "tr", "ps", "samples/s", "tr ms/st", "ps ms/st", "tr CPUs", "ps CPUs", "wall s",
        "load"), flush=True)
    t_all = time.time()
    with open(args.csv, "w", newline="") as f:
        out = csv.DictWriter(f, FIELDS)
        out.writeheader()
        for rep in range(args.repeats):
            for model, mode, t, p in cells:
                for impl in impls:
                    if impl == "paddle" and paddle_cells is not None and (model, t, p) not in paddle_cells:
                        continue
                    try:
                        r = run_cell(impl, model, mode, t, p, args)
                    except SystemExit as e:
                        print("FAILED %s" % str(e)[:3000], flush=True)
                        continue
                    r["load1"] = os.getloadavg()[0]
                    rows.append(r)
                    out.writerow({k: ("%.4g" % v if isinstance(v, float) else v) for k, v in r.items()})
                    f.flush()
                    print("%-6s %-4s %-5s %3d %3d %10.0f %9.2f %9.3f %8.2f %8.2f %7.1f %5.2f" % (
                        impl, model, mode, t, p, r["samples_per_s"], r["trainer_cpu_ms_per_step"],
                        r["pserver_cpu_ms_per_step"], r["trainer_cpu_s"], r["pserver_cpu_s"], r["job_wall_s"],
                        r["load1"]), flush=True)
    print("%d jobs in %.0f s" % (len(rows), time.time() - t_all))
    if rows:
        plot(rows, args.png or os.path.splitext(args.csv)[0] + ".png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
