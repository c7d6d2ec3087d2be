"""Conv nets on the CPU: our step with FLAGS_conv_channels_last on (the default) and off, and Paddle 1.8.5
running the same model-building code (conv_models.py) in a subprocess when its python exists
(/work/p18/bin/python or $PADDLE18_PYTHON; --paddle18 ''  skips it). All three alternate in rounds; the same
initial weights (ours, copied into Paddle's scope by name) and the same batch, first losses compared. Ratios:
ours channels-last / ours NCHW (thread CPU time: below 1, the memory order pays) and ours / Paddle 1.8.5
(wall clock: Paddle runs its own threads; below 1, we are faster). step_speed.py compares with torch eager.

    python benchmarks/conv_layout.py [--model resnet20,vgg16,mobilenet] [--batch 16] [--rounds 5] [--steps 3]

resnet20: the book's resnet_cifar10 (depth 20, Momentum); vgg16: the book's vgg16_bn_drop (img_conv_group with
batch_norm and dropout, Adam: the dropout masks differ from Paddle's, so its first losses are not compared);
mobilenet: MobileNet v1 (depthwise conv2d with groups = channels, then 1x1 convolutions, each with batch_norm +
relu; Momentum), all on 3x32x32 images. VGG's last blocks run 512 channels at 4x4 and 2x2, where
channels-last convolutions are slower: those go back to NCHW (paddle_compat/ops/defs/nn_ops.py); MobileNet's
depthwise ones stay channels-last at every size and its 1x1 ones keep their input's order.
"""

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import paddle_compat as fluid  # noqa: E402
import conv_models  # noqa: E402
from bench_util import Paddle18Process, median  # noqa: E402

torch.set_num_threads(1)


def make_step(model, flag, batch):
    """(step, first loss, initial persistables by name): our step, lowered with FLAGS_conv_channels_last=flag
    (the flag is read when a block is lowered: the warm-up runs here, under it)."""
    old = os.environ.get("FLAGS_conv_channels_last")
    os.environ["FLAGS_conv_channels_last"] = flag
    try:
        main, start, loss, feed = conv_models.build(fluid, model, batch)
        scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
        exe.run(start, scope=scope)
        init = {v.name: np.array(scope.find_var(v.name).get_tensor()) for v in start.global_block().all_parameters()}

        def step():
            return exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]
        torch.manual_seed(0)    # dropout without a fixed seed draws from torch's generator: the same masks
        first = float(np.asarray(step()).reshape(-1)[0])
        step()
    finally:
        if old is None:
            del os.environ["FLAGS_conv_channels_last"]
        else:
            os.environ["FLAGS_conv_channels_last"] = old
    return step, first, init


PADDLE18_MAIN = '''
import sys, time
import numpy as np
sys.path.insert(0, %(bench)r)
import paddle.fluid as fluid
import conv_models
main, start, loss, feed = conv_models.build(fluid, %(model)r, %(batch)d)
exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
exe.run(start, scope=scope)
init = np.load("init.npz")
for name in init.files:
    scope.find_var(name).get_tensor().set(init[name], fluid.CPUPlace())
step = lambda: exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
print("FIRST %%r" %% float(np.array(step()[0]).ravel()[0]), flush=True)
step()
for line in sys.stdin:                 # one line per timed round: the number of steps
    t0 = time.perf_counter()
    for _ in range(int(line)):
        step()
    print("TIME %%r" %% (time.perf_counter() - t0), flush=True)
'''


def paddle18(python, model, batch, init, tmp):
    np.savez(os.path.join(tmp, "init.npz"), **init)
    script = os.path.join(tmp, "p18_conv.py")
    with open(script, "w") as fh:
        fh.write(PADDLE18_MAIN % {"bench": HERE, "model": model, "batch": batch})
    return Paddle18Process(python, script, tmp)


def _ours_round(fn, steps):
    c0, t0 = time.thread_time(), time.perf_counter()
    for _ in range(steps):
        fn()
    return time.thread_time() - c0, time.perf_counter() - t0


def run_model(model, a):
    (on, l_on, init), (off, l_off, _) = make_step(model, "1", a.batch), make_step(model, "0", a.batch)
    if abs(l_on - l_off) > 1e-4 * max(1.0, abs(l_off)):
        raise AssertionError("%s: first loss %r with channels-last, %r without" % (model, l_on, l_off))
    with tempfile.TemporaryDirectory() as tmp:
        p18 = paddle18(a.paddle18, model, a.batch, init, tmp) if a.paddle18 and os.path.exists(a.paddle18) else None
        try:
            if p18 is not None and model != "vgg16" and abs(p18.first - l_off) > 1e-4 * max(1.0, abs(p18.first)):
                raise AssertionError("%s: first loss ours %r, Paddle 1.8.5 %r" % (model, l_off, p18.first))
            cpu, wall = {"on": [], "off": []}, {"on": [], "off": [], "p18": []}
            sides = [("on", on), ("off", off)] + ([("p18", p18)] if p18 is not None else [])
            for r in range(a.rounds):
                for k, fn in sides[r % len(sides):] + sides[:r % len(sides)]:      # each side leads in turn
                    if k == "p18":
                        wall[k].append(fn(a.steps) / a.steps)
                    else:
                        c, w = _ours_round(fn, a.steps)
                        cpu[k].append(c / a.steps)
                        wall[k].append(w / a.steps)
        finally:
            if p18 is not None:
                p18.close()
    ratio = median([x / y for x, y in zip(cpu["on"], cpu["off"])])
    line = "%s b%d: first loss %.6f / %.6f; cpu ms/step channels-last %.1f, NCHW %.1f, ratio %.3f" % (
        model, a.batch, l_on, l_off, median(cpu["on"]) * 1e3, median(cpu["off"]) * 1e3, ratio)
    if p18 is not None:
        rp = median([x / y for x, y in zip(wall["on"], wall["p18"])])
        line += "; wall ms/step ours %.1f, Paddle 1.8.5 %.1f (first loss %.6f), ours / Paddle %.3f" % (
            median(wall["on"]) * 1e3, median(wall["p18"]) * 1e3, p18.first, rp)
    print(line, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=",".join(conv_models.MODELS))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--paddle18", default=os.environ.get("PADDLE18_PYTHON", "/work/p18/bin/python"))
    a = ap.parse_args()
    for model in a.model.split(","):
        if model not in conv_models.MODELS:
            raise SystemExit("unknown model %r (%s)" % (model, ", ".join(conv_models.MODELS)))
        run_model(model, a)


if __name__ == "__main__":
    main()
