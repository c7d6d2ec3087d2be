"""Sync pserver-mode throughput: paddle_compat (DistributeTranspiler + Executor) against a hand-written
torch.distributed.rpc parameter server on the same model and data.

MLP 784-200-200-10, SGD, 2 trainers, 1 and 2 servers, one thread per process, all on 127.0.0.1. The
hand-written side is what a torch user would write (pytorch/examples' batch parameter server): each
server holds its shards, trainers send all their gradients for a server in ONE rpc_async per step, the
server answers through an rpc.functions.async_execution future once both trainers' gradients are in,
averaging them, taking the SGD step and returning the new shards. Shards are the same as ours (weights of
8192+ elements cut by rows in half across 2 servers, round robin).
Launches alternate (ours, torch, ours, ...); each prints samples/s; we report medians and ours/torch.
Target: >= 0.9. Ours runs on its own TCP transport (paddle_compat/backends/wire); the hand-written side on
TensorPipe's uv (TCP) transport; `--baseline-transport default` shows torch's default shm transport, whose
busy-polling reactor costs a core per process on a small shared machine. Each launch also reports the job's CPU ms per step (all
processes, all threads), which scheduling noise on a shared machine barely moves.

    python benchmarks/ps_throughput.py [--rounds 3] [--steps 200] [--batch 64]
"""

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

import torch.distributed.rpc as rpc  # noqa: E402

from bench_util import free_ports  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
SIZES = [784, 200, 200, 10]


def _data(batch, n_batches=32, seed=0):
    import numpy as np
    rng = np.random.RandomState(seed)
    x = rng.uniform(0, 1, (n_batches * batch, 784)).astype(np.float32)
    teacher = rng.randn(784, 10).astype(np.float32)
    y = np.argmax((x - 0.5) @ teacher, axis=1).astype(np.int64).reshape(-1, 1)
    return x, y


def _init(seed=1):
    import numpy as np
    rng = np.random.RandomState(seed)
    out = []
    for fi, fo in zip(SIZES[:-1], SIZES[1:]):
        lim = np.sqrt(6.0 / (fi + fo))
        out.append((rng.uniform(-lim, lim, (fi, fo)).astype(np.float32), np.zeros(fo, np.float32)))
    return out


def _cpu():
    t = os.times()
    return t.user + t.system


def _report(t_start, cpu_start, steps, batch, trainers):
    """samples/s of the job, and this process's CPU ms per step (all its threads)."""
    took = time.perf_counter() - t_start
    print("RESULT %.3f %.4f" % (steps * batch * trainers / took, (_cpu() - cpu_start) * 1e3 / steps), flush=True)


def _report_server(cpu_start, steps, clock=None):
    """The server's CPU ms per timed step (all its threads): between the ends of the last warmup step and of
    the last step, as both sides count their gradient pushes (the trainers time the same steps); without
    those marks, from cpu_start to now over every step."""
    if clock is not None and None not in clock.marks.values():
        a, b = sorted(clock.marks)
        print("SERVER %.4f" % ((clock.marks[b] - clock.marks[a]) * 1e3 / clock.steps), flush=True)
        return
    print("SERVER %.4f" % ((_cpu() - cpu_start) * 1e3 / steps), flush=True)


class _StepClock:
    """Marks this process's CPU time when the server has handled the pushes of the last warmup step and of
    the last timed step: setup (ours connects inside exe.run, torch's init_rpc comes before) and
    shutdown stay out of the per-step figure on both sides."""

    def __init__(self, trainers, warmup, steps):
        self.steps = steps
        self.marks = {warmup * trainers: None, (warmup + steps) * trainers: None}
        self.n = 0
        self.lock = threading.Lock()

    def count(self):
        with self.lock:
            self.n += 1
            if self.n in self.marks:
                self.marks[self.n] = _cpu()

    def wrap(self, fn):
        def handler(trainer_id, names, *rest):
            out = fn(trainer_id, names, *rest)
            if names:   # a push of gradients (the startup's pull carries none)
                self.count()
            return out
        return handler


# ---------------------------------------------------------------------------------------------------
# ours
def worker_ours(args):
    import paddle_compat as fluid
    role = os.environ["TRAINING_ROLE"]
    eps = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"]
    tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    img = fluid.layers.data(name="img", shape=[784], dtype="float32")
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    h = img
    for i, (w, b) in enumerate(_init()):
        h = fluid.layers.fc(h, size=w.shape[1], act="softmax" if i == 2 else "relu",
                            param_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(w)),
                            bias_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(b)))
    loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
    fluid.optimizer.SGD(learning_rate=0.1).minimize(loss)
    t = fluid.DistributeTranspiler()
    t.transpile(tid, pservers=eps, trainers=args.trainers)
    exe = fluid.Executor(fluid.CPUPlace())
    if role == "PSERVER":
        ep = os.environ["PADDLE_CURRENT_ENDPOINT"]
        prog = t.get_pserver_program(ep)
        exe.run(t.get_startup_program(ep, prog))
        clock = _StepClock(args.trainers, args.warmup, args.steps)
        from paddle_compat.backends.ps import service    # time each step's exchange (a benchmark-only hook)
        service.EXTENSIONS = service.EXTENSIONS + (
            lambda svc: svc.register_handler("exchange", clock.wrap(svc.handlers["exchange"])),)
        c0 = _cpu()
        exe.run(prog)
        _report_server(c0, args.warmup + args.steps, clock)
        return
    prog = t.get_trainer_program()
    exe.run(fluid.default_startup_program())
    x, y = _data(args.batch)
    nb = len(x) // args.batch
    for s in range(args.warmup + args.steps):
        if s == args.warmup:
            t0, c0 = time.perf_counter(), _cpu()
        k = ((s * args.trainers + tid) % nb) * args.batch
        exe.run(prog, feed={"img": x[k:k + args.batch], "label": y[k:k + args.batch]}, fetch_list=[loss])
    _report(t0, c0, args.steps, args.batch, args.trainers)
    exe.close()


# ---------------------------------------------------------------------------------------------------
# hand-written torch.distributed.rpc parameter server
class _Server:
    """Shards of the parameters; one sync step per arrival of every trainer's gradients."""

    def __init__(self, shards, trainers, lr):
        import torch
        self.shards = [torch.from_numpy(s.copy()) for s in shards]
        self.trainers, self.lr = trainers, lr
        self.lock = threading.Lock()
        self.acc, self.count, self.fut = None, 0, torch.futures.Future()
        self.clock = None

    def update(self, grads):
        import torch
        with self.lock:
            fut = self.fut
            if self.acc is None:
                self.acc = [g.clone() for g in grads]
            else:
                for a, g in zip(self.acc, grads):
                    a.add_(g)
            self.count += 1
            if self.count == self.trainers:
                with torch.no_grad():
                    for p, a in zip(self.shards, self.acc):
                        p.sub_(a, alpha=self.lr / self.trainers)
                self.acc, self.count, self.fut = None, 0, torch.futures.Future()
                fut.set_result(self.shards)
        if self.clock is not None:
            self.clock.count()
        return fut

    def get(self):
        return self.shards


_SERVER = None


@rpc.functions.async_execution
def _rpc_update(grads):
    return _SERVER.update(grads)


def _shard_plan(servers):
    """[(param index, row start, rows, server)], the same cut and round robin as the transpiler's."""
    plan, k = [], 0
    params = []
    for fi, fo in zip(SIZES[:-1], SIZES[1:]):
        params += [(fi, fo), (fo,)]
    order = sorted(range(len(params)), key=lambda i: "fc_%d.%s_0" % (i // 2, "b" if i % 2 else "w"))
    for i in order:
        shape = params[i]
        numel = shape[0] * (shape[1] if len(shape) > 1 else 1)
        nblk = min(servers, max(1, numel // 8192))
        rows = -(-shape[0] // nblk)
        for j in range(nblk):
            plan.append((i, j * rows, min(rows, shape[0] - j * rows), k % servers))
            k += 1
    return plan


def worker_torch(args):
    import torch
    global _SERVER
    role, rank, world = os.environ["ROLE"], int(os.environ["RANK"]), int(os.environ["WORLD"])
    servers = args.servers
    plan = _shard_plan(servers)
    init = [a for wb in _init() for a in wb]
    transports = None if args.baseline_transport == "default" else [args.baseline_transport]
    opts = rpc.TensorPipeRpcBackendOptions(init_method="tcp://127.0.0.1:%s" % os.environ["PORT"],
                                           rpc_timeout=120, num_worker_threads=8, _transports=transports)
    name = "ps%d" % rank if role == "PSERVER" else "trainer%d" % (rank - servers)
    if role == "PSERVER":
        mine = [(i, r0, n) for i, r0, n, s in plan if s == rank]
        _SERVER = _Server([init[i][r0:r0 + n] for i, r0, n in mine], args.trainers, 0.1)
        _SERVER.clock = clock = _StepClock(args.trainers, args.warmup, args.steps)
    rpc.init_rpc(name, rank=rank, world_size=world, rpc_backend_options=opts)
    if role == "TRAINER":
        tid = rank - servers
        params = [torch.from_numpy(a.copy()).requires_grad_(True) for a in init]
        by_server = {s: [(i, r0, n) for i, r0, n, ss in plan if ss == s] for s in range(servers)}
        x, y = _data(args.batch)
        xs, ys = torch.from_numpy(x), torch.from_numpy(y)
        nb = len(x) // args.batch
        for s in range(args.warmup + args.steps):
            if s == args.warmup:
                t0, c0 = time.perf_counter(), _cpu()
            k = ((s * args.trainers + tid) % nb) * args.batch
            h = xs[k:k + args.batch]
            for li in range(3):
                h = h @ params[2 * li] + params[2 * li + 1]
                h = torch.relu(h) if li < 2 else torch.softmax(h, dim=1)
            loss = -torch.log(h.gather(1, ys[k:k + args.batch])).mean()
            grads = torch.autograd.grad(loss, params)
            futs = {sv: rpc.rpc_async("ps%d" % sv, _rpc_update, args=([grads[i][r0:r0 + n] for i, r0, n in sh],))
                    for sv, sh in by_server.items()}
            with torch.no_grad():
                for sv, fut in futs.items():
                    for (i, r0, n), t in zip(by_server[sv], fut.wait()):
                        params[i][r0:r0 + n].copy_(t)
            float(loss)
        _report(t0, c0, args.steps, args.batch, args.trainers)
        rpc.shutdown()
    else:
        c0 = _cpu()
        rpc.shutdown()
        _report_server(c0, args.warmup + args.steps, clock)


# ---------------------------------------------------------------------------------------------------
def launch(impl, servers, args):
    base = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=REPO, TORCH_CPP_LOG_LEVEL="ERROR",
                PYTHONUNBUFFERED="1")
    argv = [sys.executable, os.path.abspath(__file__), "--worker", impl, "--servers", str(servers),
            "--trainers", str(args.trainers), "--steps", str(args.steps), "--warmup", str(args.warmup),
            "--batch", str(args.batch), "--baseline-transport", args.baseline_transport]
    ports = free_ports(servers + 1)
    eps = ",".join("127.0.0.1:%d" % p for p in ports[:servers])
    envs = []
    world = servers + args.trainers
    for r in range(world):
        ps = r < servers
        if impl == "ours":
            e = dict(TRAINING_ROLE="PSERVER" if ps else "TRAINER", PADDLE_PSERVERS_IP_PORT_LIST=eps,
                     PADDLE_TRAINERS_NUM=str(args.trainers))
            e.update(PADDLE_CURRENT_ENDPOINT=eps.split(",")[r]) if ps else e.update(PADDLE_TRAINER_ID=str(r - servers))
        else:
            e = dict(ROLE="PSERVER" if ps else "TRAINER", RANK=str(r), WORLD=str(world), PORT=str(ports[-1]))
        envs.append(dict(base, **e))
    procs = [subprocess.Popen(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
             for e in envs]
    try:
        outs = [p.communicate(timeout=300)[0].decode(errors="replace") for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, 9)
                p.wait()
    lines = [line.split() for o in outs for line in o.splitlines() if line.startswith(("RESULT ", "SERVER "))]
    rates = [float(ln[1]) for ln in lines if ln[0] == "RESULT"]
    if len(rates) != args.trainers or any(p.returncode != 0 for p in procs):
        raise SystemExit("%s with %d server(s) failed:\n%s" % (impl, servers, "\n----\n".join(o[-2000:] for o in outs)))
    # CPU of the whole job per step (trainers' timed steps + servers' average step): robust to the
    # scheduling noise of a shared machine, which wall-clock samples/s is not
    cpu = sum(float(ln[2]) for ln in lines if ln[0] == "RESULT") + sum(float(ln[1]) for ln in lines if ln[0] == "SERVER")
    return min(rates), cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--trainers", type=int, default=2)
    ap.add_argument("--servers", type=int, default=0, help="(worker) number of servers")
    ap.add_argument("--worker", choices=["ours", "torch"])
    ap.add_argument("--baseline-transport", default="uv", choices=["uv", "default"],
                    help="TensorPipe transport of the hand-written side: uv (TCP, what ours uses) or torch's "
                         "default (shm on one machine, whose reactor busy-polls a core per process)")
    args = ap.parse_args()
    if args.worker:
        import torch
        torch.set_num_threads(1)
        fn = worker_ours if args.worker == "ours" else worker_torch
        prof = os.environ.get("PS_BENCH_PROFILE")     # a directory: cProfile each worker into it
        if prof:
            import cProfile
            cProfile.runctx("fn(args)", globals(), {"fn": fn, "args": args},
                            os.path.join(prof, "%s-%s-%d.prof" % (args.worker, os.environ.get("TRAINING_ROLE", os.environ.get("ROLE")), os.getpid())))
        else:
            fn(args)
        return
    res = {}
    for r in range(args.rounds):
        for servers in (1, 2):
            for impl in (("ours", "torch") if r % 2 == 0 else ("torch", "ours")):
                v, cpu = launch(impl, servers, args)
                res.setdefault((impl, servers), []).append(v)
                res.setdefault((impl, servers, "cpu"), []).append(cpu)
                print("round %d  %-5s %d server(s): %8.1f samples/s   job CPU %.3f ms/step" % (r, impl, servers, v, cpu),
                      flush=True)
    print("\nMLP 784-200-200-10, batch %d, %d trainers, sync, %d timed steps, medians of %d alternating launches:"
          % (args.batch, args.trainers, args.steps, args.rounds))
    for servers in (1, 2):
        ours = statistics.median(res[("ours", servers)])
        base = statistics.median(res[("torch", servers)])
        cpu_o = statistics.median(res[("ours", servers, "cpu")])
        cpu_b = statistics.median(res[("torch", servers, "cpu")])
        print("  %d server(s): ours %8.1f samples/s   torch rpc %8.1f samples/s   ratio ours/torch %.3f  (target >= 0.9)"
              % (servers, ours, base, ours / base))
        print("               job CPU per step: ours %.3f ms   torch rpc %.3f ms   throughput-equivalent ratio %.3f"
              % (cpu_o, cpu_b, cpu_b / cpu_o))


if __name__ == "__main__":
    main()
