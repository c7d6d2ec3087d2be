"""nccl2 data parallelism vs torch DDP: 2 trainer processes on 127.0.0.1, gloo on CPU, one thread each.

Both sides train the same MLP (784-1024-1024-10, softmax + cross entropy, SGD) on the same data, batch 256 per
rank, in the same two processes, alternating round by round so machine noise hits both alike:
  ours: DistributeTranspiler nccl2 + fluid.ParallelExecutor(num_trainers=2)  (bucketed, overlapped allreduce)
  DDP:  torch.nn.parallel.DistributedDataParallel over a gloo process group (its C++ reducer)
Prints median samples/s (both ranks together) of each side, and the median of the per-round ratios
ours/DDP (each round pairs adjacent timings, so slow drifts of a shared machine cancel); target >= 0.9.

    python benchmarks/collective_throughput.py [--rounds 15] [--steps 4]
"""

import argparse
import os
import subprocess
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
from bench_util import alternate, fluid_mlp, free_ports, median  # noqa: E402
SIZES, BATCH, LR, TARGET = [784, 1024, 1024, 10], 256, 0.01, 0.9



def make_init(np):
    rng = np.random.RandomState(0)
    init = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        lim = np.sqrt(6.0 / (a + b))
        init.append((rng.uniform(-lim, lim, (a, b)).astype(np.float32), np.zeros(b, np.float32)))
    return init


def make_data(np, rank):
    rng = np.random.RandomState(100 + rank)
    return [(rng.uniform(0, 1, (BATCH, SIZES[0])).astype(np.float32),
             rng.randint(0, SIZES[-1], (BATCH, 1)).astype(np.int64)) for _ in range(4)]


def make_ours(fluid, init, rank, eps):
    main, start, loss = fluid_mlp(fluid, init, LR)
    config = fluid.DistributeTranspilerConfig()
    config.mode = "nccl2"
    fluid.DistributeTranspiler(config).transpile(rank, program=main, startup_program=start, trainers=",".join(eps),
                                                 current_endpoint=eps[rank])
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(start, scope=scope)
    pe = fluid.ParallelExecutor(False, loss_name=loss.name, main_program=main, num_trainers=len(eps),
                                trainer_id=rank, scope=scope)
    return lambda x, y: pe.run(fetch_list=[loss.name], feed={"img": x, "label": y})[0]


def make_ddp(torch, init, rank, port):
    import datetime
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=120))
    layers = []
    for i, (w, b) in enumerate(init):
        lin = torch.nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w.T))
            lin.bias.copy_(torch.from_numpy(b))
        layers += [lin, torch.nn.Softmax(dim=1) if i == len(init) - 1 else torch.nn.ReLU()]
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(*layers))
    opt = torch.optim.SGD(model.parameters(), lr=LR)

    def step(x, y):
        prob = model(torch.from_numpy(x))
        loss = -torch.log(prob.gather(1, torch.from_numpy(y))).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach().numpy().reshape(1)
    return step


def worker(rank, eps, ddp_port, rounds, steps):
    sys.path.insert(0, REPO)
    import numpy as np
    import torch
    import paddle_compat as fluid
    torch.set_num_threads(1)
    init, data = make_init(np), make_data(np, rank)
    ours = make_ours(fluid, init, rank, eps)
    ddp = make_ddp(torch, init, rank, ddp_port)
    a, b = float(ours(*data[0])[0]), float(ddp(*data[0])[0])     # same numbers before timing anything
    assert abs(a - b) < 1e-4 * max(1.0, abs(b)), ("first-step losses differ", a, b)
    t_ours, t_ddp = alternate(ours, ddp, data, rounds, steps, warmup=3)
    if rank == 0:
        samples = 2 * BATCH * steps
        so, sd = samples / median(t_ours), samples / median(t_ddp)
        ratio = median([d / o for o, d in zip(t_ours, t_ddp)])
        print("MLP %s, batch %d/rank, 2 ranks gloo: ours %.0f samples/s  DDP %.0f samples/s (medians)  ratio %.3f "
              "(median of per-round ratios; target >= %.2f) %s" % ("-".join(map(str, SIZES)), BATCH, so, sd, ratio,
                                                                   TARGET, "ok" if ratio >= TARGET else "MISSED"))
        print("  per-round samples/s ours: %s" % " ".join("%.0f" % (samples / t) for t in t_ours))
        print("  per-round samples/s DDP:  %s" % " ".join("%.0f" % (samples / t) for t in t_ddp))
        return 0 if ratio >= TARGET else 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--rank", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--endpoints", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--ddp_port", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rank is not None:
        return worker(args.rank, args.endpoints.split(","), args.ddp_port, args.rounds, args.steps)
    p0, p1, pd = free_ports(3)
    eps = "127.0.0.1:%d,127.0.0.1:%d" % (p0, p1)
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME=os.environ.get("GLOO_SOCKET_IFNAME", "lo"))
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--rank", str(r), "--endpoints", eps,
                               "--ddp_port", str(pd), "--rounds", str(args.rounds), "--steps", str(args.steps)],
                              env=env) for r in (0, 1)]
    try:
        rcs = [p.wait(timeout=900) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return max(rcs)


if __name__ == "__main__":
    sys.exit(main())
