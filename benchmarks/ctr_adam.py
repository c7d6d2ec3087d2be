"""The CTR-DNN train step with Adam on a 1M-row sparse embedding (examples/ctr_dnn's model: 26 id slots, 10-dim
embedding(is_sparse=True) with sum pooling, 13 dense features, fc 400x3, softmax, cross_entropy; Adam with
Paddle's default lazy_mode=False, so every row's moments decay and every row with momentum moves each step):
ours against real PaddlePaddle 1.8.5 and against the model hand-written in torch (nn.EmbeddingBag sum pooling,
sparse=False, torch.optim.Adam over the whole table, default and fused=True: the dense update is what
non-lazy Adam computes; and, for reference, sparse=True with torch.optim.SparseAdam, torch's lazy Adam).

    python benchmarks/ctr_adam.py [--rounds 5] [--steps 10] [--batch 128] [--paddle_python /work/p18/bin/python]

Each side runs in a worker process of its own (Paddle 1.8.5 needs its own Python) holding the same weights and
batches; the controller alternates the workers round by round (each one idle while the other runs) and, in
our worker, ours and torch alternate too. Prints per side the median CPU time per step of the stepping thread
(the machine is shared: wall time also counts waiting for a core) and the median wall time, the ratios
ours / 1.8.5 and ours / torch, and the first losses of each side (ours and 1.8.5 must agree; torch's Adam
corrects the bias differently, so only its first loss, before any update, is compared).
Without a Paddle 1.8.5 Python only ours and torch are measured.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SLOTS, DENSE, EMB, HEIGHT, HIDDEN = 26, 13, 10, 1000001, (400, 400, 400)


def weights_and_batches(np, batch, nbatch, seed=7):
    rs = np.random.RandomState(seed)
    w = {"emb": rs.uniform(-0.01, 0.01, (HEIGHT, EMB)).astype(np.float32)}
    sizes = [SLOTS * EMB + DENSE] + list(HIDDEN) + [2]
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        w["fc%d_w" % i] = rs.normal(0, 1.0 / np.sqrt(a), (a, b)).astype(np.float32)
        w["fc%d_b" % i] = np.zeros(b, np.float32)
    batches = []
    for _ in range(nbatch):
        # Criteo-like: one id per slot and sample, a few hot ids per slot, the rest spread over the table
        hot = rs.rand(batch, SLOTS) < 0.3
        ids = np.where(hot, rs.randint(0, 100, (batch, SLOTS)), rs.randint(0, HEIGHT, (batch, SLOTS)))
        batches.append((rs.uniform(0, 1, (batch, DENSE)).astype(np.float32), ids.astype(np.int64),
                        rs.randint(0, 2, (batch, 1)).astype(np.int64)))
    return w, batches


def fluid_side(fluid, np, w, batches):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        dense = fluid.layers.data(name="dense_input", shape=[DENSE], dtype="float32")
        slots = [fluid.layers.data(name="C%d" % i, shape=[1], lod_level=1, dtype="int64") for i in range(SLOTS)]
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        pooled = [fluid.layers.sequence_pool(fluid.layers.embedding(
            input=s, is_sparse=True, size=[HEIGHT, EMB], param_attr=fluid.ParamAttr(name="emb")), "sum")
            for s in slots]
        h = fluid.layers.concat(pooled + [dense], axis=1)
        for i in range(len(HIDDEN) + 1):
            h = fluid.layers.fc(h, size=(list(HIDDEN) + [2])[i], act="relu" if i < len(HIDDEN) else "softmax",
                                param_attr=fluid.ParamAttr(name="fc%d_w" % i),
                                bias_attr=fluid.ParamAttr(name="fc%d_b" % i))
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=h, label=label))
        fluid.optimizer.Adam(learning_rate=0.001).minimize(loss)
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    for name, value in w.items():
        scope.find_var(name).get_tensor().set(value, place)
    feeds = []
    for d, ids, y in batches:
        feed = {"dense_input": d, "label": y}
        for i in range(SLOTS):
            feed["C%d" % i] = fluid.create_lod_tensor(ids[:, i:i + 1].copy(), [[1] * len(ids)], place)
        feeds.append(feed)

    def step(i):
        return float(np.array(exe.run(main, feed=feeds[i % len(feeds)], fetch_list=[loss], scope=scope)[0])
                     .ravel()[0])
    return step


def torch_side(np, w, batches, fused=False, sparse=False):
    """One lookup of all slots' ids (one id per slot and sample: the sum pooling is the row itself), so the
    table gets one gradient per step. sparse=False with torch.optim.Adam is the update non-lazy Adam computes
    (every row's moments decay); sparse=True with torch.optim.SparseAdam for the table is torch's lazy Adam
    (only the looked-up rows change: other numbers, timed for reference)."""
    import torch
    import torch.nn.functional as F
    table = torch.nn.Parameter(torch.from_numpy(w["emb"].copy()))
    layers = [(torch.nn.Parameter(torch.from_numpy(w["fc%d_w" % i].copy())),
               torch.nn.Parameter(torch.from_numpy(w["fc%d_b" % i].copy()))) for i in range(len(HIDDEN) + 1)]
    dense_params = [p for wb in layers for p in wb]
    if sparse:
        opts = [torch.optim.SparseAdam([table], lr=0.001), torch.optim.Adam(dense_params, lr=0.001)]
    else:
        opts = [torch.optim.Adam([table] + dense_params, lr=0.001, fused=fused or None)]
    data = [(torch.from_numpy(d), torch.from_numpy(ids), torch.from_numpy(y)) for d, ids, y in batches]

    def step(i):
        d, ids, y = data[i % len(data)]
        h = torch.cat([F.embedding(ids, table, sparse=sparse).reshape(len(ids), -1), d], 1)
        for k, (wk, bk) in enumerate(layers):
            h = torch.addmm(bk, h, wk)
            h = torch.relu(h) if k < len(layers) - 1 else torch.softmax(h, 1)
        loss = -torch.log(h.gather(1, y)).mean()
        for o in opts:
            o.zero_grad(set_to_none=True)
        loss.backward()
        for o in opts:
            o.step()
        return float(loss.detach())
    return step


def worker(args):
    """Reads a command per line: 'losses N' (the first N losses, from fresh state: run first) or 'round K
    SIDE' (K steps of SIDE); answers one JSON line each."""
    import numpy as np
    if args.worker == "ours":
        sys.path.insert(0, os.path.join(HERE, ".."))      # `import paddle` is then paddle_compat's
        import torch
        torch.set_num_threads(1)
    import paddle.fluid as fluid
    w, batches = weights_and_batches(np, args.batch, 8)
    sides = {"fluid": fluid_side(fluid, np, w, batches)}
    if args.worker == "ours":
        sides["torch"] = torch_side(np, w, batches)
        sides["torch fused"] = torch_side(np, w, batches, fused=True)
        sides["torch lazy"] = torch_side(np, w, batches, sparse=True)
    done = {k: 0 for k in sides}
    print(json.dumps({"ready": sorted(sides)}), flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "losses":
            out = {k: [f(i) for i in range(int(cmd[1]))] for k, f in sides.items()}
            done = {k: int(cmd[1]) for k in sides}
        else:
            k, side = int(cmd[1]), " ".join(cmd[2:])
            f = sides[side]
            c0, t0 = time.thread_time(), time.perf_counter()
            for _ in range(k):
                f(done[side])
                done[side] += 1
            out = {"cpu": time.thread_time() - c0, "wall": time.perf_counter() - t0}
        print(json.dumps(out), flush=True)


class Worker:
    def __init__(self, python, name, batch):
        env = dict(os.environ, OMP_NUM_THREADS="1", GLOG_v="0", CPU_NUM="1")
        self.proc = subprocess.Popen([python, os.path.abspath(__file__), "--worker", name, "--batch", str(batch)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                     universal_newlines=True, cwd="/tmp")
        self.sides = self.read()["ready"]

    def read(self):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("worker exited (rc %s)" % self.proc.wait())
            if line.startswith("{"):
                return json.loads(line)

    def ask(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--paddle_python", default="/work/p18/bin/python")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    workers = [("ours", Worker(sys.executable, "ours", args.batch))]
    if args.paddle_python and os.path.exists(args.paddle_python):
        workers.append(("paddle1.8.5", Worker(args.paddle_python, "paddle", args.batch)))
    try:
        losses = {}
        for name, wk in workers:
            for side, ls in wk.ask("losses 3").items():
                losses[name if side == "fluid" else side] = ls
        for k, ls in losses.items():
            print("first losses %-12s %s" % (k, " ".join("%.6f" % x for x in ls)))
        if "paddle1.8.5" in losses:
            for a, b in zip(losses["ours"], losses["paddle1.8.5"]):
                assert abs(a - b) <= 1e-4 * max(1.0, abs(b)), ("ours and 1.8.5 differ", losses)
        for side in ("torch", "torch fused", "torch lazy"):
            assert abs(losses["ours"][0] - losses[side][0]) <= 1e-4, ("not the same model", side, losses)
        for name, wk in workers:     # warm up: optimizer state, lowering
            for side in wk.sides:
                wk.ask("round 3 %s" % side)
        times = {}
        loads = []
        for r in range(args.rounds):
            order = workers if r % 2 == 0 else workers[::-1]
            for name, wk in order:
                for side in (wk.sides if r % 2 == 0 else wk.sides[::-1]):
                    key = name if side == "fluid" else side
                    t = wk.ask("round %d %s" % (args.steps, side))
                    times.setdefault(key, []).append(t)
            loads.append(os.getloadavg()[0])
    finally:
        for _, wk in workers:
            wk.close()
    ms = {k: (statistics.median(t["cpu"] for t in v) / args.steps * 1e3,
              statistics.median(t["wall"] for t in v) / args.steps * 1e3) for k, v in times.items()}
    for k, (c, wl) in ms.items():
        print("%-12s cpu %8.2f ms/step  wall %8.2f ms/step" % (k, c, wl))

    def ratio(a, b):    # median of the per-round ratios of CPU time
        return statistics.median(x["cpu"] / y["cpu"] for x, y in zip(times[a], times[b]))
    line = "ratios (cpu time):"
    if "paddle1.8.5" in times:
        line += " ours / 1.8.5 %.3f" % ratio("ours", "paddle1.8.5")
    line += "  ours / torch %.3f  ours / torch fused %.3f  ours / torch lazy %.3f" % (
        ratio("ours", "torch"), ratio("ours", "torch fused"), ratio("ours", "torch lazy"))
    print(line + "  (load average %.1f-%.1f on %d cores)" % (min(loads), max(loads), os.cpu_count()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
