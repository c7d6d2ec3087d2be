"""Train-step speed of Fluid programs against the same models hand-written in eager torch (and, on cuda, torch
with the whole step captured in one CUDA graph): ResNet-20, the two MLPs of executor_overhead.py, the LSTM text
classifier (dynamic_lstm over LoD vs torch's packed LSTM) and the CTR-DNN step (see step_models.py).

    python benchmarks/step_speed.py [--device cpu|cuda] [--model resnet20,mlp,lstm,ctr] [--batch 16,32]
                                    [--rounds 7] [--steps N] [--no-time] [--ops-detail] [--nofetch]
                                    [--amp [--amp-dtype float16|bfloat16]]

For each model: the losses of both sides for the first steps (same weights, same batches; they must agree
before anything is timed), then the ops per step under torch.profiler -- on the CPU leaf aten ops (an aten op
with no aten op inside it, about one kernel launch on a GPU) and top-level aten calls (an aten op under no
other profiled event: what Python called directly; torch's optimizer step and autograd's backward nodes run
inside events of their own; "outermost" counts those too: an aten op inside no other aten op); on cuda the
kernels launched -- then both sides timed in alternating rounds in one process; prints the median ms/step of each, the
median of the per-round ratios (ours / torch) and the ops ratios; on the CPU also this thread's CPU time per
step (what the target is judged on there: the 2-core machines these run on are shared, and the wall clock
counts the time a step waited for a core). One thread (torch.set_num_threads(1)). Target on the CPU: every
ratio <= 1.0 (on the CPU our convolutions read channels-last memory, FLAGS_conv_channels_last; ResNet-20's
ops are counted in NCHW memory too, the GPU's layout). --ops-detail prints the leaf-op histogram of both
sides; --nofetch also times our step with an empty fetch_list (after its own warm-up: a new fetch list is a
new lowering). --amp: ResNet-20 only, ours through contrib.mixed_precision.decorate (float16 by default;
--amp-dtype bfloat16) against torch eager
float32 (the ratio and target: <= 0.5x on a GPU), with torch autocast timed alongside.
"""

import argparse
import collections
import gc
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import step_models as sm  # noqa: E402
from bench_util import median, timed  # noqa: E402

torch.set_num_threads(1)


def op_counts(step, data, steps, device):
    """Per step: (leaf aten ops, (top-level aten ops, outermost aten ops), kernels or None, Counter of leaf op
    names). Outermost: an aten op inside no other aten op (torch's optimizer and backward calls count too)."""
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    for i in range(2):                  # warm: lowering, lazy buffers, optimizer state
        step(*data[i % len(data)])
    if device == "cuda":
        torch.cuda.synchronize()
    with profile(activities=acts) as prof:
        for i in range(steps):
            step(*data[i % len(data)])
        if device == "cuda":
            torch.cuda.synchronize()
    leaves, top, outer, kernels = collections.Counter(), 0, 0, 0
    for ev in prof.events():
        if getattr(ev, "device_type", None) is not None and "CUDA" in str(ev.device_type):
            kernels += 1
            continue
        if not ev.name.startswith("aten::"):
            continue
        if not _has_aten_below(ev):
            leaves[ev.name] += 1
        if ev.cpu_parent is None:
            top += 1
        p = ev.cpu_parent
        while p is not None and not p.name.startswith("aten::"):
            p = p.cpu_parent
        outer += p is None
    n = float(steps)
    hist = collections.Counter({k: v / n for k, v in leaves.items()})
    return sum(leaves.values()) / n, (top / n, outer / n), (kernels / n if device == "cuda" else None), hist


def _has_aten_below(ev):
    todo = list(ev.cpu_children)
    while todo:
        c = todo.pop()
        if c.name.startswith("aten::"):
            return True
        todo.extend(c.cpu_children)
    return False


class GraphStep:
    """torch's step captured whole in one CUDA graph: static input buffers, replay, loss read back."""

    def __init__(self, fn, data, device):
        x0 = [torch.from_numpy(a).to(device) for a in data[0]]
        self.static = [t.clone() for t in x0]
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):          # warm up: optimizer state, cuDNN choices
                fn(*self.static)
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = fn(*self.static)

    def __call__(self, *batch):
        for buf, a in zip(self.static, batch):
            buf.copy_(torch.from_numpy(a), non_blocking=True)
        self.graph.replay()
        return self.out.cpu().numpy().reshape(1)


def check_losses(case, steps=3):
    """The first steps' losses of both sides (same weights, same batches) must agree."""
    rows = []
    for i in range(steps):
        a = float(np.asarray(case.ours(*case.data[i % len(case.data)])).ravel()[0])
        b = float(np.asarray(case.ref(*case.data[i % len(case.data)])).ravel()[0])
        rows.append((a, b))
        if abs(a - b) > case.tol * max(1.0, abs(b)):
            raise AssertionError("%s: step %d loss ours %r vs torch %r (tolerance %g): not the same model"
                                 % (case.name, i, a, b, case.tol))
    return rows


def cases_for(models, batches, device, amp=None):
    if amp:
        for b in batches:
            yield lambda b=b: sm.make_resnet(b, device, amp=amp)
        return
    for m in models:
        if m == "resnet20":
            for b in batches:
                yield lambda b=b: sm.make_resnet(b, device)
        elif m == "mlp":
            yield lambda: sm.make_mlp([784, 1024, 1024, 10], 256, device)
            yield lambda: sm.make_mlp([784, 200, 200, 10], 32, device)
        elif m == "lstm":
            yield lambda: sm.make_lstm(device)
        elif m == "ctr":
            yield lambda: sm.make_ctr(device)
        else:
            raise SystemExit("unknown model %r (resnet20, mlp, lstm, ctr)" % m)


def steps_for(name, device):
    if device == "cuda":
        return 50
    return 5 if name.startswith(("resnet", "lstm")) else (10 if "1024" in name else 100)


def run_case(case, args):
    losses = check_losses(case)
    print("%s: first losses ours/torch %s" % (case.name, " ".join("%.6f/%.6f" % r for r in losses)))
    psteps = 2 if case.name.startswith(("resnet", "lstm")) else 5
    lo, to, ko, ho = op_counts(case.ours, case.data, psteps, args.device)
    lr, tr, kr, hr = op_counts(case.ref, case.data, psteps, args.device)
    if args.ops_detail:
        print("  leaf aten ops per step (ours, torch):")
        for name in sorted(set(ho) | set(hr), key=lambda k: -(ho.get(k, 0) + hr.get(k, 0))):
            print("    %-40s %7.1f %7.1f" % (name, ho.get(name, 0), hr.get(name, 0)))
    line = "  ops/step: leaf aten ours %d torch %d (%.2fx), top-level ours %d torch %d (%.2fx), outermost aten " \
           "ours %d torch %d (%.2fx)" % (lo, lr, lo / lr, to[0], tr[0], to[0] / tr[0], to[1], tr[1], to[1] / tr[1])
    if ko is not None:
        line += ", kernels ours %d torch %d (%.2fx)" % (ko, kr, ko / kr)
    print(line)
    if args.device == "cpu" and case.rebuild is not None:
        # on the CPU our convolutions read channels-last memory (FLAGS_conv_channels_last), whose oneDNN
        # reorders add leaf ops a GPU does not run: the GPU proxy is the count in NCHW memory
        old = os.environ.get("FLAGS_conv_channels_last")
        os.environ["FLAGS_conv_channels_last"] = "0"
        try:
            ln, tn, _, _ = op_counts(case.rebuild().ours, case.data, psteps, args.device)
        finally:
            if old is None:
                del os.environ["FLAGS_conv_channels_last"]
            else:
                os.environ["FLAGS_conv_channels_last"] = old
        print("  ops/step in NCHW memory (FLAGS_conv_channels_last=0, as on a GPU): leaf aten ours %d torch %d "
              "(%.2fx), top-level ours %d" % (ln, lr, ln / lr, tn[0]))
    if args.no_time:
        return True
    steps = args.steps or steps_for(case.name, args.device)
    sides = [("ours", case.ours), ("torch", case.ref)]
    if args.device == "cuda" and case.graph is not None:
        sides.append(("torch graph", GraphStep(case.graph, case.data, args.device)))
    if args.nofetch and case.nofetch is not None:
        sides.append(("ours, no fetch", case.nofetch))
    sides.extend(case.others)
    for _, fn in sides:
        timed(fn, case.data, 3)     # (a new fetch list is a new lowering: warmed here, not timed)
    gc.collect()                    # the set-up's garbage is not collected inside a timed round
    wall = {k: [] for k, _ in sides}
    cpu = {k: [] for k, _ in sides}
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    for r in range(args.rounds):
        for k, fn in sides[r % len(sides):] + sides[:r % len(sides)]:   # each side leads in turn
            sync()
            c0, t0 = time.thread_time(), time.perf_counter()
            timed(fn, case.data, steps)
            sync()                  # a step without a fetch may still be running on the device
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.thread_time() - c0)
    ms = lambda d, k: median(d[k]) / steps * 1e3     # noqa: E731
    rel = lambda d, a, b: median([x / y for x, y in zip(d[a], d[b])])     # noqa: E731
    ratio = rel(wall, "ours", "torch")
    out = "  ms/step: ours %.3f  torch %.3f  ratio %.3f" % (ms(wall, "ours"), ms(wall, "torch"), ratio)
    if "torch graph" in wall:
        out += "  torch graph %.3f (ours / graph %.3f)" % (ms(wall, "torch graph"), rel(wall, "ours", "torch graph"))
    if "ours, no fetch" in wall:
        out += "  ours without a fetch %.3f (/ with %.3f)" % (ms(wall, "ours, no fetch"),
                                                            rel(wall, "ours, no fetch", "ours"))
    for k, _ in case.others:
        out += "  %s %.3f (ours / it %.3f)" % (k, ms(wall, k), rel(wall, "ours", k))
    print(out)
    if args.device == "cpu":
        # this thread's CPU time: on a machine shared with other jobs the wall clock also counts the time the
        # step waited for a core, the CPU time does not; the target is judged on it
        ratio = rel(cpu, "ours", "torch")
        out = "  cpu ms/step: ours %.3f  torch %.3f  ratio %.3f" % (ms(cpu, "ours"), ms(cpu, "torch"), ratio)
        if "ours, no fetch" in cpu:
            out += "  ours without a fetch %.3f (/ with %.3f)" % (ms(cpu, "ours, no fetch"),
                                                                rel(cpu, "ours, no fetch", "ours"))
        print(out + "  (load average %.1f on %d cores)" % (os.getloadavg()[0], os.cpu_count()))
    # with AMP on a GPU the target is 0.5x torch eager float32 (issue's AMP target); elsewhere 1.0x
    target = 0.5 if case.others and args.device == "cuda" else 1.0
    ok = ratio <= target
    print("  %s ratio %.3f: %s" % ("cpu-time" if args.device == "cpu" else "step-time", ratio,
                                   "ok (target <= %.1f)" % target if ok else "target <= %.1f MISSED" % target))
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--model", default="resnet20,mlp,lstm,ctr")
    ap.add_argument("--batch", default="", help="ResNet-20 batches (default 32,128 on cuda, 16 on the cpu)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=0, help="steps per timed round (default: by model)")
    ap.add_argument("--no-time", action="store_true", help="losses and op counts only")
    ap.add_argument("--ops-detail", action="store_true", help="print the leaf-op histogram of both sides")
    ap.add_argument("--nofetch", action="store_true",
                    help="also time our step with an empty fetch_list (ResNet-20 and the MLPs)")
    ap.add_argument("--amp", action="store_true",
                    help="ResNet-20 with contrib.mixed_precision against torch eager float32 and torch autocast")
    ap.add_argument("--amp-dtype", choices=["float16", "bfloat16"], default="float16")
    args = ap.parse_args()
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False     # CUDAPlace runs without TF32 (Paddle's numbers)
        torch.backends.cudnn.allow_tf32 = False
    batches = [int(b) for b in (args.batch or ("32,128" if args.device == "cuda" else "16")).split(",")]
    ok = True
    for make in cases_for(args.model.split(","), batches, args.device, args.amp_dtype if args.amp else None):
        case = make()
        if case is None:
            continue
        ok &= run_case(case, args)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
