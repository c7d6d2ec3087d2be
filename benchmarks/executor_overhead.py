"""Our train step vs the same MLP hand-written in torch, in one process, alternating, one thread.

Targets: step-time ratio <= 1.10 for 784-1024-1024-10 batch 256, <= 1.25 for 784-200-200-10 batch 32.
Prints the median step time of each side and their ratio (ours / torch).

    python benchmarks/executor_overhead.py [--rounds 7] [--steps 50] [--device cuda]

--device cuda: both sides on cuda:0 (ours through fluid.CUDAPlace(0)), each step fetching its loss to the
host as a Fluid script's fetch_list does; TF32 off on both (CUDAPlace turns it off for Paddle's numbers).
"""

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import paddle_compat as fluid  # noqa: E402
from bench_util import alternate, fluid_mlp, median  # noqa: E402

torch.set_num_threads(1)


def xavier(rng, fan_in, fan_out):
    lim = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-lim, lim, (fan_in, fan_out)).astype(np.float32)


def make_ours(sizes, init, lr, device="cpu"):
    main, start, loss = fluid_mlp(fluid, init, lr)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CUDAPlace(0) if device == "cuda" else fluid.CPUPlace())
    exe.run(start, scope=scope)

    def step(x, y):
        return exe.run(main, feed={"img": x, "label": y}, fetch_list=[loss], scope=scope)[0]
    return step


def make_torch(init, lr, device="cpu"):
    """The baseline a torch user would write: nn.Linear layers, softmax + NLL of log, SGD."""
    layers = []
    for i, (w, b) in enumerate(init):
        lin = torch.nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w.T))
            lin.bias.copy_(torch.from_numpy(b))
        layers.append(lin)
        layers.append(torch.nn.Softmax(dim=1) if i == len(init) - 1 else torch.nn.ReLU())
    model = torch.nn.Sequential(*layers).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    def step(x, y):
        xt, yt = torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)
        prob = model(xt)
        loss = -torch.log(prob.gather(1, yt)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.detach().cpu().numpy().reshape(1)
    return step


def bench(sizes, batch, rounds, steps, device="cpu"):
    rng = np.random.RandomState(0)
    init = [(xavier(rng, a, b), np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]
    data = [(rng.uniform(0, 1, (batch, sizes[0])).astype(np.float32),
             rng.randint(0, sizes[-1], (batch, 1)).astype(np.int64)) for _ in range(8)]
    ours, ref = make_ours(sizes, init, 0.01, device), make_torch(init, 0.01, device)
    # same numbers before timing anything
    a, b = ours(*data[0]), ref(*data[0])
    assert abs(float(a[0]) - float(b[0])) < 1e-4 * max(1.0, abs(float(b[0]))), (a, b)
    t_ours, t_ref = alternate(ours, ref, data, rounds, steps)
    return median(t_ours) / steps, median(t_ref) / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=0, help="steps per round (default: by model size)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = ap.parse_args()
    cases = [("784-1024-1024-10", [784, 1024, 1024, 10], 256, 1.10, 10),
             ("784-200-200-10", [784, 200, 200, 10], 32, 1.25, 200)]
    ok = True
    for name, sizes, batch, target, steps in cases:
        mo, mr = bench(sizes, batch, args.rounds, args.steps or steps, args.device)
        ratio = mo / mr
        ok &= ratio <= target
        print("%s %-18s batch %-4d ours %8.3f ms  torch %8.3f ms  ratio %.3f  (target <= %.2f) %s"
              % (args.device, name, batch, mo * 1e3, mr * 1e3, ratio, target, "ok" if ratio <= target else "MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
