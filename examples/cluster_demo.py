"""A real parameter-server job on this machine: 2 pservers + 2 trainers on 127.0.0.1.

    ./dev run                         fit_a_line, sync, 40 steps
    ./dev run --model mlp --steps 20  the 784-200-200-10 MLP
    ./dev run --async                 async mode

Run without a role, this script picks free ports and starts the four processes itself (each is this
same script with TRAINING_ROLE / PADDLE_TRAINER_ID set, as a cluster launcher would), hands them a fresh job
key in a 0600 file (deleted at the end; a key you set yourself is used instead), prints their output, cleans
them up by pid and exits non-zero if any of them failed. Each process runs the seed
documents' pserver example as written: the same program on every node, the role picks
`exe.run(pserver_startup); exe.run(pserver_prog)` or training with `t.get_trainer_program()`.
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from paddle_compat.distributed.procs import free_ports  # noqa: E402


# ------------------------------------------------------------------------------------------------
# one node of the job (the seed documents' example)
def make_data(model, n=32 * 200, seed=0):
    """The reference recipe's synthetic data (see tests/reference_data.py)."""
    import numpy as np
    rng = np.random.RandomState(seed)
    fit_x = rng.uniform(-1, 1, (n, 13)).astype(np.float32)
    w_true = rng.randn(13, 1).astype(np.float32)
    fit_y = (fit_x @ w_true + 0.5 + 0.1 * rng.randn(n, 1)).astype(np.float32)
    if model == "fit_a_line":
        return fit_x, fit_y
    mnist_x = rng.uniform(0, 1, (n, 784)).astype(np.float32)
    teacher = rng.randn(784, 10).astype(np.float32)
    mnist_y = np.argmax((mnist_x - 0.5) @ teacher, axis=1).astype(np.int64).reshape(n, 1)
    return mnist_x, mnist_y


def node(args):
    import torch
    torch.set_num_threads(1)
    import paddle_compat as fluid

    from paddle_compat.backends import cluster
    # the launcher's variables (backends/cluster.py names them), read as fleet's role makers read them
    spec = cluster.resolve_cluster(os.environ, is_collective=False)
    role = "PSERVER" if spec.role == cluster.SERVER else "TRAINER"
    pserver_endpoints = ",".join(spec.server_endpoints)
    trainers = spec.worker_num
    trainer_id = spec.current_id if role == "TRAINER" else 0
    current_endpoint = spec.current_endpoint

    if args.model == "fit_a_line":
        x = fluid.layers.data(name="x", shape=[13], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        y_predict = fluid.layers.fc(input=x, size=1, act=None)
        avg_cost = fluid.layers.mean(fluid.layers.square_error_cost(input=y_predict, label=y))
        fluid.optimizer.SGD(learning_rate=0.05).minimize(avg_cost)
        names = ("x", "y")
    else:
        img = fluid.layers.data(name="img", shape=[784], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        h = fluid.layers.fc(input=img, size=200, act="relu")
        h = fluid.layers.fc(input=h, size=200, act="relu")
        prediction = fluid.layers.fc(input=h, size=10, act="softmax")
        avg_cost = fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))
        fluid.optimizer.Adam(learning_rate=0.001).minimize(avg_cost)
        names = ("img", "label")

    t = fluid.DistributeTranspiler()
    t.transpile(trainer_id, pservers=pserver_endpoints, trainers=trainers, sync_mode=not args.async_mode)
    exe = fluid.Executor(fluid.CPUPlace())
    if role == "PSERVER":
        pserver_program = t.get_pserver_program(current_endpoint)
        pserver_startup_program = t.get_startup_program(current_endpoint, pserver_program)
        exe.run(pserver_startup_program)
        exe.run(pserver_program)          # returns once every trainer has called exe.close()
        print("pserver %s: all trainers done" % current_endpoint, flush=True)
    elif role == "TRAINER":
        trainer_program = t.get_trainer_program()
        exe.run(fluid.default_startup_program())
        xs, ys = make_data(args.model)
        for step in range(args.steps):
            k = ((step * trainers + trainer_id) * 32) % len(xs)   # each trainer its own batches
            loss, = exe.run(trainer_program, feed={names[0]: xs[k:k + 32], names[1]: ys[k:k + 32]},
                            fetch_list=[avg_cost])
            print("step %3d  loss %.6f" % (step, float(loss.reshape(-1)[0])), flush=True)
        exe.close()                       # tells the pservers this trainer is done
    else:
        raise SystemExit("TRAINING_ROLE must be PSERVER or TRAINER, got %r" % role)


# ------------------------------------------------------------------------------------------------
# the launcher: 2 pservers + 2 trainers on 127.0.0.1
def _pump(name, stream, sink):
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip()
        sink.append((name, line))
        print("[%s] %s" % (name, line), flush=True)


def run_job(argv, pservers, trainers, timeout, title, extra_env=None):
    """Start `argv` as `pservers` pservers + `trainers` trainers on 127.0.0.1 (free ports; each process in
    its own session, its role in TRAINING_ROLE / PADDLE_TRAINER_ID as a cluster launcher would set them),
    echo their output, and kill whatever is left by pid at the end. Returns (failed, lines, seconds):
    failed lists (process, return code or reason); lines are (process, line) in arrival order."""
    from paddle_compat.backends import cluster, job_env
    eps = ["127.0.0.1:%d" % p for p in free_ports(pservers)]
    common = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1",
                  PYTHONUNBUFFERED="1", FLAGS_rpc_deadline=os.environ.get("FLAGS_rpc_deadline", "60000"),
                  **(extra_env or {}))
    keyfile = None
    if not job_env.user_gave_key(common):
        keyfile = job_env.JobKeyFile()       # this job's own key; deleted when the job ends
        common = keyfile.env(common)
    roles = [("pserver%d" % i, cluster.pserver_env(eps, i, trainers)) for i in range(pservers)]
    roles += [("trainer%d" % i, cluster.ps_trainer_env(eps, i, trainers)) for i in range(trainers)]
    print("pservers %s, %d trainers, %s" % (",".join(eps), trainers, title), flush=True)
    procs, lines, pumps = [], [], []
    t0 = time.monotonic()

    def stop_all(*_):
        for _, p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    old = {s: signal.signal(s, lambda *a: (stop_all(), sys.exit(130))) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for name, env in roles:
            p = subprocess.Popen(argv, env=dict(common, **env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 cwd=REPO, start_new_session=True)
            procs.append((name, p))
            th = threading.Thread(target=_pump, args=(name, p.stdout, lines), daemon=True)
            th.start()
            pumps.append(th)
        deadline = t0 + timeout
        failed = []
        while True:
            running = [(n, p) for n, p in procs if p.poll() is None]
            failed = [(n, p.returncode) for n, p in procs if p.returncode not in (None, 0)]
            if not running or failed:
                break
            if time.monotonic() > deadline:
                failed = [(n, "still running after %ds" % timeout) for n, _ in running]
                break
            time.sleep(0.1)
        if failed:   # one failed: the others fail soon (they detect the loss); give them a moment to say so
            end = time.monotonic() + 15
            while any(p.poll() is None for _, p in procs) and time.monotonic() < end:
                time.sleep(0.1)
    finally:
        stop_all()
        for _, p in procs:
            p.wait()
        for th in pumps:
            th.join(timeout=2)
        for s, h in old.items():
            signal.signal(s, h)
        if keyfile is not None:
            keyfile.remove()
    took = time.monotonic() - t0
    if failed:
        print("FAILED after %.1fs: %s" % (took, ", ".join("%s (%s)" % (n, rc) for n, rc in failed)), flush=True)
    return failed, lines, took


def launch(args):
    argv = [sys.executable, os.path.abspath(__file__), "--model", args.model, "--steps", str(args.steps)]
    if args.async_mode:
        argv.append("--async")
    failed, lines, took = run_job(argv, args.pservers, args.trainers, args.timeout, "%s mode, %s, %d steps" % (
        "async" if args.async_mode else "sync", args.model, args.steps))
    if failed:
        return 1
    firsts, finals = {}, {}
    for name, line in lines:
        if line.startswith("step"):
            firsts.setdefault(name, line)
            finals[name] = line
    for name in sorted(finals):
        print("%s: first %s | last %s" % (name, firsts[name], finals[name]))
    print("OK: 2 pservers + 2 trainers finished in %.1fs, all processes exited 0" % took, flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=["fit_a_line", "mlp"], default="fit_a_line")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--async", dest="async_mode", action="store_true", help="async mode (no barriers)")
    ap.add_argument("--pservers", type=int, default=2)
    ap.add_argument("--trainers", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=120, help="seconds before the launcher gives up")
    args = ap.parse_args()
    from paddle_compat.backends.cluster import role_of
    if role_of(os.environ):
        node(args)
        return 0
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
