"""CTR train step (LoD id slots, shared sparse embedding, sum pooling, fc tower, sparse SGD): ours vs the same
model hand-written in torch, one process, one thread, alternating rounds; prints medians and the ratio.

    python benchmarks/ctr_step.py [--rounds 7] [--steps 100]

Both sides get prebuilt minibatches (ours: LoDTensors as create_lod_tensor makes them; torch: tensors and
offsets), so the ratio is the cost of running a Fluid program (feed checks, LoD conversion, generated code,
one autograd call, optimizer ops) over the torch a user would write. `--metrics` adds our auc/accuracy ops
(the torch side has none), to show what the metrics cost.
"""

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import paddle_compat as fluid  # noqa: E402
from ctr_data import SyntheticCTR  # noqa: E402
from ctr_model import build_ctr_model  # noqa: E402
from bench_util import alternate, median  # noqa: E402

torch.set_num_threads(1)


def initial_weights(slots, emb_dim, height, hidden, seed=0):
    rs = np.random.RandomState(seed)
    init = {"emb_table": rs.uniform(-0.01, 0.01, (height, emb_dim)).astype(np.float32)}
    sizes = [slots * emb_dim + 13] + list(hidden) + [2]
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        lim = np.sqrt(6.0 / (a + b))
        init["fc_%d.w_0" % i] = rs.uniform(-lim, lim, (a, b)).astype(np.float32)
        init["fc_%d.b_0" % i] = np.zeros(b, np.float32)
    return init


def make_ours(cfg, init, lr, metrics):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        m = build_ctr_model(fluid, cfg["slots"], cfg["emb_dim"], cfg["height"], is_sparse=True,
                            hidden=cfg["hidden"], init=init, with_metrics=metrics)
        fluid.optimizer.SGD(learning_rate=lr).minimize(m.loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start, scope=scope)
    names = [v.name for v in m.feed_list]

    def step(batch):
        return exe.run(main, feed=dict(zip(names, batch["ours"])), fetch_list=[m.loss], scope=scope)[0]
    return step


def make_torch(cfg, init, lr):
    """What a torch user would write: F.embedding(sparse=True) + segment sum per slot, Linear layers,
    softmax + NLL of log, autograd, sparse row update for the table and SGD for the rest."""
    table = torch.tensor(init["emb_table"], requires_grad=True)
    layers = []
    for i in range(len(cfg["hidden"]) + 1):
        layers.append((torch.tensor(init["fc_%d.w_0" % i], requires_grad=True),
                       torch.tensor(init["fc_%d.b_0" % i], requires_grad=True)))
    dense_params = [p for wb in layers for p in wb]

    def step(batch):
        dense, slots, label = batch["torch"]
        pooled = [torch.segment_reduce(F.embedding(ids, table, sparse=True), "sum", offsets=off, unsafe=True)
                  for ids, off in slots]
        h = torch.cat(pooled + [dense], 1)
        for i, (w, b) in enumerate(layers):
            h = torch.addmm(b, h, w)
            h = torch.softmax(h, 1) if i == len(layers) - 1 else torch.relu(h)
        loss = -torch.log(h.gather(1, label)).mean()
        grads = torch.autograd.grad(loss, [table] + dense_params)
        with torch.no_grad():
            g = grads[0]
            table.index_add_(0, g._indices()[0], g._values() * -lr)
            for p, gp in zip(dense_params, grads[1:]):
                p.sub_(lr * gp)
        return loss.detach().numpy().reshape(1)
    return step


def batches(cfg, n):
    data = SyntheticCTR(num_samples=cfg["batch"] * n, num_slots=cfg["slots"], table_height=cfg["height"], seed=3)
    out = []
    for fields in data.batches(cfg["batch"], fluid.CPUPlace()):
        slots = [(torch.from_numpy(np.array(t).reshape(-1)), torch.tensor(t.lod()[0])) for t in fields[1:-1]]
        out.append({"ours": fields, "torch": (torch.from_numpy(fields[0]), slots, torch.from_numpy(fields[-1]))})
    return out


def bench(cfg, rounds, steps, metrics):
    init = initial_weights(cfg["slots"], cfg["emb_dim"], cfg["height"], cfg["hidden"])
    data = batches(cfg, 16)
    ours, ref = make_ours(cfg, init, 0.05, metrics), make_torch(cfg, init, 0.05)
    a, b = ours(data[0]), ref(data[0])   # same numbers before timing anything
    assert abs(float(a[0]) - float(b[0])) < 1e-5 * max(1.0, abs(float(b[0]))), (a, b)
    t_ours, t_ref = alternate(ours, ref, [(d,) for d in data], rounds, steps)
    return median(t_ours) / steps, median(t_ref) / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--metrics", action="store_true", help="keep auc + accuracy ops in our program")
    args = ap.parse_args()
    cases = [("8 slots, 8-dim, fc 64-32", dict(slots=8, emb_dim=8, height=100000, hidden=(64, 32), batch=32)),
             ("26 slots, 10-dim, fc 400x3", dict(slots=26, emb_dim=10, height=1000001, hidden=(400, 400, 400),
                                                 batch=64))]
    for name, cfg in cases:
        mo, mr = bench(cfg, args.rounds, args.steps, args.metrics)
        print("%-28s batch %-3d ours %7.3f ms (%6.0f samples/s)  torch %7.3f ms  ratio %.3f"
              % (name, cfg["batch"], mo * 1e3, cfg["batch"] / mo, mr * 1e3, mo / mr))
    return 0


if __name__ == "__main__":
    sys.exit(main())
